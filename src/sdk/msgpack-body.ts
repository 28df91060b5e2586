/** How the SDK prepares a body for msgpack: typed arrays as bytes, text as well-formed UTF-16. */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `s` with each unpaired surrogate replaced by U+FFFD. msgpack strings are UTF-8, which has no
 * form for one: msgpackr would write its three bytes of CESU-8, which the server reads as three
 * U+FFFD (text cut in the middle of an emoji). A JSON client's text is the same once the server
 * writes it out.
 */
export function wellFormedText(s: string): string {
  const native = (s as { isWellFormed?: () => boolean }).isWellFormed;
  if (native !== undefined ? native.call(s) : !LONE_SURROGATE.test(s)) return s;
  LONE_SURROGATE.lastIndex = 0;
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * A msgpack body with every typed array other than Uint8Array (Float32Array, Int16Array, …, and
 * DataView) replaced by a Uint8Array over its bytes, and every string (values and keys) made
 * well-formed (`wellFormedText`), wherever msgpackr writes the values it holds: in arrays, plain
 * objects, class instances (their own fields, as msgpackr writes them), Maps and Sets. msgpackr
 * would write such an array's elements one per byte into a `bin` of its byte length. The body is
 * copied only where it holds one of those.
 */
export function msgpackBody(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return wellFormedText(v);
  if (typeof v !== 'object' || v === null || depth > 256) return v;
  if (ArrayBuffer.isView(v)) return v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const item = msgpackBody(v[i], depth + 1);
      if (item !== v[i]) (out ??= v.slice())[i] = item;
    }
    return out ?? v;
  }
  if (v instanceof Map) {
    let changed = false;
    const entries = [...v].map(([k, item]) => {
      const key = msgpackBody(k, depth + 1);
      const value = msgpackBody(item, depth + 1);
      if (key !== k || value !== item) changed = true;
      return [key, value] as const;
    });
    return changed ? new Map(entries) : v;
  }
  if (v instanceof Set) {
    // msgpackr writes a Set as the array of its items.
    const before = [...v] as unknown[];
    const items = before.map((item) => msgpackBody(item, depth + 1));
    return items.some((item, i) => item !== before[i]) ? items : v;
  }
  // What msgpackr writes as a value of its own, not as the fields of an object.
  if (v instanceof Date || v instanceof RegExp || v instanceof Error || v instanceof ArrayBuffer) return v;
  const entries = Object.entries(v);
  let changed = false;
  const prepared = entries.map(([k, item]) => {
    const key = wellFormedText(k);
    const value = msgpackBody(item, depth + 1);
    if (key !== k || value !== item) changed = true;
    return [key, value] as const;
  });
  if (!changed) return v;
  const out: Record<string, unknown> = {};
  // Defined, not assigned: a key `__proto__` stays a key.
  for (const [k, item] of prepared) Object.defineProperty(out, k, { value: item, enumerable: true, writable: true, configurable: true });
  return out;
}
