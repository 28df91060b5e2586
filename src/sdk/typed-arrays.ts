/** How the SDK writes typed arrays in msgpack bodies. */

/**
 * A msgpack body with every typed array other than Uint8Array (Float32Array, Int16Array, …, and
 * DataView) replaced by a Uint8Array over its bytes, wherever msgpackr writes the values it holds:
 * in arrays, plain objects, class instances (their own fields, as msgpackr writes them), Maps and
 * Sets. msgpackr would write such an array's elements one per byte into a `bin` of its byte
 * length. The body is copied only where it holds one.
 */
export function typedArraysAsBytes(v: unknown, depth: number): unknown {
  if (typeof v !== 'object' || v === null || depth > 256) return v;
  if (ArrayBuffer.isView(v)) return v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const item = typedArraysAsBytes(v[i], depth + 1);
      if (item !== v[i]) (out ??= v.slice())[i] = item;
    }
    return out ?? v;
  }
  if (v instanceof Map) {
    let changed = false;
    const entries = [...v].map(([k, item]) => {
      const key = typedArraysAsBytes(k, depth + 1);
      const value = typedArraysAsBytes(item, depth + 1);
      if (key !== k || value !== item) changed = true;
      return [key, value] as const;
    });
    return changed ? new Map(entries) : v;
  }
  if (v instanceof Set) {
    // msgpackr writes a Set as the array of its items.
    const before = [...v] as unknown[];
    const items = before.map((item) => typedArraysAsBytes(item, depth + 1));
    return items.some((item, i) => item !== before[i]) ? items : v;
  }
  // What msgpackr writes as a value of its own, not as the fields of an object.
  if (v instanceof Date || v instanceof RegExp || v instanceof Error || v instanceof ArrayBuffer) return v;
  let out: Record<string, unknown> | null = null;
  for (const [k, item] of Object.entries(v)) {
    const bytes = typedArraysAsBytes(item, depth + 1);
    if (bytes !== item) {
      out ??= { ...(v as Record<string, unknown>) };
      Object.defineProperty(out, k, { value: bytes, enumerable: true, writable: true, configurable: true });
    }
  }
  return out ?? v;
}
