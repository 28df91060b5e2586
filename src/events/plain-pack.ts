/**
 * The main thread's fast path for event payloads of plain data: writes a payload straight into
 * the invoke stage's buffer, byte for byte what codec.ts's Packr writes, with no intermediate
 * buffer, no Buffer object made and no copy. A game's invokes mostly carry small plain objects
 * (a move, a click, a chat line), and on a many-core machine the main thread's encoding is what
 * bounds the events it can hand to the event threads.
 *
 * Handled: null, booleans, numbers, strings (short ones of any text, long ones of ASCII), arrays
 * and plain objects of these, nested up to MAX_DEPTH. Anything else (undefined, Dates, Maps, Sets,
 * binary, bigints, class instances, long non-ASCII strings) is declined and goes through Packr, as
 * does a payload that does not fit in the room left.
 */

/** Declined: not plain data as defined above. */
export const NOT_PLAIN = -1;
/** The payload did not fit between `pos` and the end of the buffer. */
export const NO_ROOM = -2;

const MAX_DEPTH = 32;
/** Packr encodes strings this long or longer with Buffer's UTF-8 writer, which differs on lone surrogates. */
const SHORT_STRING = 0x40;

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
/** Float bytes are copied in reverse (msgpack is big-endian): only right on a little-endian host. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const hasOwnProperty = Object.prototype.hasOwnProperty;

let out: Uint8Array = new Uint8Array(0);
let end = 0;

/**
 * Writes `value` as msgpack into `target` from `pos`; returns where it ends, or NOT_PLAIN or
 * NO_ROOM (the bytes after `pos` may then have been written over).
 */
export function packPlain(value: unknown, target: Uint8Array, pos: number): number {
  if (!LITTLE_ENDIAN) return NOT_PLAIN;
  out = target;
  end = target.length;
  return write(value, pos, 0);
}

// Each writer returns the position after what it wrote, or a negative code passed straight up.
function write(value: unknown, pos: number, depth: number): number {
  switch (typeof value) {
    case 'string':
      return writeString(value, pos);
    case 'number':
      return writeNumber(value, pos);
    case 'boolean':
      if (pos >= end) return NO_ROOM;
      out[pos] = value ? 0xc3 : 0xc2;
      return pos + 1;
    case 'object':
      if (value === null) {
        if (pos >= end) return NO_ROOM;
        out[pos] = 0xc0;
        return pos + 1;
      }
      if (depth >= MAX_DEPTH) return NOT_PLAIN;
      if (value.constructor === Object) return writeObject(value as Record<string, unknown>, pos, depth + 1);
      if (value.constructor === Array) return writeArray(value as unknown[], pos, depth + 1);
      return NOT_PLAIN;
    default:
      return NOT_PLAIN;
  }
}

function writeObject(object: Record<string, unknown>, pos: number, depth: number): number {
  // Packr asks the object's own hasOwnProperty; one that is not the usual is left to Packr.
  if (object.hasOwnProperty !== hasOwnProperty) return NOT_PLAIN;
  // Packr writes every plain object as a map 16 and fills in its size at the end.
  if (pos + 3 > end) return NO_ROOM;
  const at = pos;
  out[pos] = 0xde;
  pos += 3;
  let size = 0;
  for (const key in object) {
    if (!hasOwnProperty.call(object, key)) continue;
    pos = writeString(key, pos);
    if (pos < 0) return pos;
    // Numbers and strings, a game message's usual fields, without the dispatch of `write`.
    const value = object[key];
    if (typeof value === 'number') pos = writeNumber(value, pos);
    else if (typeof value === 'string') pos = writeString(value, pos);
    else pos = write(value, pos, depth);
    if (pos < 0) return pos;
    size++;
  }
  if (size > 0xffff) return NOT_PLAIN; // Packr refuses it with its own message
  out[at + 1] = size >> 8;
  out[at + 2] = size & 0xff;
  return pos;
}

function writeArray(array: unknown[], pos: number, depth: number): number {
  const length = array.length;
  if (pos + 5 > end) return NO_ROOM;
  if (length < 0x10) {
    out[pos++] = 0x90 | length;
  } else if (length < 0x10000) {
    out[pos++] = 0xdc;
    out[pos++] = length >> 8;
    out[pos++] = length & 0xff;
  } else {
    out[pos++] = 0xdd;
    pos = writeUint32(length, pos);
  }
  for (let i = 0; i < length && pos >= 0; i++) pos = write(array[i], pos, depth);
  return pos;
}

function writeNumber(value: number, pos: number): number {
  if (pos + 9 > end) return NO_ROOM;
  if (value >>> 0 === value) return writeSized(value, pos, 0x00, 0x80, 0xcc);
  if (value >> 0 === value) {
    if (value >= -0x20) {
      out[pos] = 0x100 + value;
      return pos + 1;
    }
    if (value >= -0x80) {
      out[pos] = 0xd0;
      out[pos + 1] = value + 0x100;
      return pos + 2;
    }
    if (value >= -0x8000) {
      out[pos] = 0xd1;
      out[pos + 1] = (value >> 8) & 0xff;
      out[pos + 2] = value & 0xff;
      return pos + 3;
    }
    out[pos] = 0xd2;
    return writeUint32(value >>> 0, pos + 1);
  }
  out[pos] = 0xcb;
  f64[0] = value;
  for (let i = 0; i < 8; i++) out[pos + 1 + i] = f64Bytes[7 - i]!;
  return pos + 9;
}

function writeUint32(value: number, pos: number): number {
  out[pos] = value >>> 24;
  out[pos + 1] = (value >>> 16) & 0xff;
  out[pos + 2] = (value >>> 8) & 0xff;
  out[pos + 3] = value & 0xff;
  return pos + 4;
}

function writeString(value: string, pos: number): number {
  const length = value.length;
  // The longest header (5) and three bytes per UTF-16 unit at most.
  if (pos + 5 + length * 3 > end) return NO_ROOM;
  // ASCII, the common case: as many bytes as units, so the header is known before the bytes.
  let start: number;
  if (length < 0x20) {
    out[pos] = 0xa0 | length;
    start = pos + 1;
  } else {
    start = writeSized(length, pos, 0xa0, 0x20, 0xd9);
  }
  const o = out; // a local: the module's binding is read once, not per byte
  let i = 0;
  for (; i < length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x80) break;
    o[start + i] = c;
  }
  if (i === length) return start + length;
  if (length >= SHORT_STRING) return NOT_PLAIN;
  // At most 63 units, so at most 189 bytes: written after a two-byte header, moved back a byte
  // when a one-byte header fits (Packr's own encoding of short strings, lone surrogates included).
  let p = pos + 2;
  for (let k = 0; k < length; k++) {
    let c1 = value.charCodeAt(k);
    let c2: number;
    if (c1 < 0x80) {
      out[p++] = c1;
    } else if (c1 < 0x800) {
      out[p++] = (c1 >> 6) | 0xc0;
      out[p++] = (c1 & 0x3f) | 0x80;
    } else if ((c1 & 0xfc00) === 0xd800 && ((c2 = value.charCodeAt(k + 1)) & 0xfc00) === 0xdc00) {
      c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (c2 & 0x03ff);
      k++;
      out[p++] = (c1 >> 18) | 0xf0;
      out[p++] = ((c1 >> 12) & 0x3f) | 0x80;
      out[p++] = ((c1 >> 6) & 0x3f) | 0x80;
      out[p++] = (c1 & 0x3f) | 0x80;
    } else {
      out[p++] = (c1 >> 12) | 0xe0;
      out[p++] = ((c1 >> 6) & 0x3f) | 0x80;
      out[p++] = (c1 & 0x3f) | 0x80;
    }
  }
  const bytes = p - pos - 2;
  if (bytes < 0x20) {
    out.copyWithin(pos + 1, pos + 2, p);
    out[pos] = 0xa0 | bytes;
    return pos + 1 + bytes;
  }
  out[pos] = 0xd9;
  out[pos + 1] = bytes;
  return p;
}

/**
 * `n` (an unsigned 32-bit value or size) in the shortest of msgpack's forms for it: one byte
 * `fixBase | n` when below `fixBelow`, else `code8`, `code8 + 1` or `code8 + 2` followed by it in
 * 1, 2 or 4 bytes (uint 8/16/32 from 0xcc, str 8/16/32 from 0xd9).
 */
function writeSized(n: number, pos: number, fixBase: number, fixBelow: number, code8: number): number {
  if (n < fixBelow) {
    out[pos] = fixBase | n;
    return pos + 1;
  }
  if (n < 0x100) {
    out[pos] = code8;
    out[pos + 1] = n;
    return pos + 2;
  }
  if (n < 0x10000) {
    out[pos] = code8 + 1;
    out[pos + 1] = n >> 8;
    out[pos + 2] = n & 0xff;
    return pos + 3;
  }
  out[pos] = code8 + 2;
  return writeUint32(n, pos + 1);
}
