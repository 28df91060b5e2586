/**
 * Envelope codecs on the server. The main thread only peeks at the message type (a few byte
 * compares on the canonical `{type, …}` form the SDK writes); workers decode and encode whole
 * envelopes. A session id carries its codec in its lowest bit (see `sessionCodec`), so a
 * worker knows how to decode or encode for any session without a lookup.
 */
import { Unpackr } from 'msgpackr';
import { unpackRange as unpackRangeWith } from '../events/codec.ts';
import { msgpackFrame } from './msgpack-reply.ts';
import type { NetworkFrame } from '../events/types.ts';
import { ProtocolError, type CodecName, type Envelope, type ProtocolErrorCode } from './protocol.ts';
import { ErrorTable, format } from '../errors.ts';

// Binary fields are copied: a frame's bytes are in a worker's claim buffer, which the next claim overwrites.
const unpackr = new Unpackr({ useRecords: false, copyBuffers: true });

/** The codec of a session id: even ids are json sessions, odd ids msgpack. */
export function sessionCodec(sessionId: number): CodecName {
  return sessionId % 2 === 1 ? 'msgpack' : 'json';
}

/** Sets the codec bit on a random id in [2^32, 2^53). */
export function withCodecBit(random: number, codec: CodecName): number {
  return random - (random % 2) + (codec === 'msgpack' ? 1 : 0);
}

// `{"type":"` as bytes.
const JSON_PREFIX = [0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22];

/**
 * The message type of a canonical frame — JSON starting `{"type":"…"` or a msgpack map whose
 * first key is `type` — or null when the frame is not in that form (the worker decodes it fully).
 * Only ASCII types without escapes are recognised here.
 */
export function peekType(bytes: Uint8Array, binary: boolean): string | null {
  const span = peekTypeSpan(bytes, binary);
  return span < 0 ? null : typeText(bytes, span % TYPE_SPAN, Math.floor(span / TYPE_SPAN));
}

/** `peekTypeSpan` packs the type's byte range as start + end * TYPE_SPAN. */
export const TYPE_SPAN = 0x10000;

/** The type's bytes `[start, end)` of a frame as a string (ASCII, as `peekTypeSpan` checked). */
export function typeText(bytes: Uint8Array, start: number, end: number): string {
  let type = '';
  for (let i = start; i < end; i++) type += String.fromCharCode(bytes[i]!);
  return type;
}

/** Where `peekType` finds the type: start + end * TYPE_SPAN, or -1 (no string is made). */
export function peekTypeSpan(bytes: Uint8Array, binary: boolean): number {
  let start: number;
  let end: number;
  if (!binary) {
    if (bytes.length < 11) return -1;
    for (let i = 0; i < 9; i++) if (bytes[i] !== JSON_PREFIX[i]) return -1;
    start = 9;
    end = start;
    const limit = Math.min(bytes.length, start + 64);
    while (end < limit && bytes[end] !== 0x22) {
      const c = bytes[end]!;
      if (c === 0x5c || c < 0x20 || c > 0x7e) return -1;
      end++;
    }
    if (end === limit) return -1;
  } else {
    // map header (fixmap, or map16 as msgpackr writes it) · fixstr(4) "type" · fixstr or str8 type
    const head = bytes[0]!;
    let k: number;
    if (head >= 0x81 && head <= 0x8f) k = 1;
    else if (head === 0xde && bytes.length > 3 && (bytes[1]! > 0 || bytes[2]! > 0)) k = 3;
    else return -1;
    if (bytes.length < k + 7) return -1;
    if (bytes[k] !== 0xa4 || bytes[k + 1] !== 0x74 || bytes[k + 2] !== 0x79 || bytes[k + 3] !== 0x70 || bytes[k + 4] !== 0x65) return -1;
    const s = bytes[k + 5]!;
    let len: number;
    if (s >= 0xa0 && s <= 0xbf) {
      len = s - 0xa0;
      start = k + 6;
    } else if (s === 0xd9) {
      len = bytes[k + 6]!;
      start = k + 7;
    } else {
      return -1;
    }
    end = start + len;
    if (len === 0 || len > 64 || end > bytes.length) return -1;
    for (let i = start; i < end; i++) {
      const c = bytes[i]!;
      if (c < 0x20 || c > 0x7e) return -1;
    }
  }
  if (end === start) return -1;
  return start + end * TYPE_SPAN;
}

/** A failed decode: the error frame's code and message. */
export class DecodeError extends Error {
  /** `id`: the message's own, when it has a readable one, so that the error frame answers its request. */
  constructor(readonly code: ProtocolErrorCode, message: string, readonly type?: string, readonly id?: number) {
    super(message);
  }
}

/** Checks the decoded value is an envelope; throws `DecodeError` otherwise. */
export function checkEnvelope(value: unknown): Envelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) {
    throw new DecodeError(ProtocolError.malformed, 'a message must be an object {type, body}');
  }
  const v = value as Record<string, unknown>;
  const id = Number.isSafeInteger(v.id) ? v.id as number : undefined;
  if (typeof v.type !== 'string' || v.type === '') {
    throw new DecodeError(ProtocolError.malformed, "a message needs a non-empty string 'type'", undefined, id);
  }
  if (v.id !== undefined && !Number.isSafeInteger(v.id)) {
    throw new DecodeError(ProtocolError.malformed, "'id' must be an integer", v.type);
  }
  for (const key in v) {
    if (key !== 'type' && key !== 'body' && key !== 'id') {
      throw new DecodeError(ProtocolError.malformed, `unknown envelope key '${key}' (allowed: type, body, id)`, v.type, id);
    }
  }
  return v as unknown as Envelope;
}

let textSource: ArrayBufferLike | null = null;
/** `Buffer#utf8Slice`: what `toString('utf8', …)` calls after checking its arguments, called directly. */
type Utf8Source = Buffer<ArrayBufferLike> & { utf8Slice(start: number, end: number): string };
let textView = Buffer.alloc(0) as Utf8Source;

/**
 * The UTF-8 text of `bytes`. Workers decode many frames from one claim buffer: a Buffer over
 * that whole buffer is kept, so no Buffer object is made per frame.
 */
function utf8Text(bytes: Uint8Array): string {
  return utf8Range(bytes, 0, bytes.byteLength);
}

/** The UTF-8 text of `bytes[start, end)`, as `utf8Text`. */
function utf8Range(bytes: Uint8Array, start: number, end: number): string {
  if (bytes.buffer !== textSource) {
    textSource = bytes.buffer;
    textView = Buffer.from(bytes.buffer) as Utf8Source;
  }
  return textView.utf8Slice(bytes.byteOffset + start, bytes.byteOffset + end);
}

// `","body":` and `,"id":` as bytes.
const BODY_KEY = [0x22, 0x2c, 0x22, 0x62, 0x6f, 0x64, 0x79, 0x22, 0x3a];
const ID_KEY = [0x2c, 0x22, 0x69, 0x64, 0x22, 0x3a];

/**
 * The envelope of a JSON frame in the canonical form the SDK writes, `{"type":"<type>","body":<X>}`
 * or `{"type":"<type>","body":<X>,"id":<integer>}`, whose type the main thread has already
 * matched (its type bytes are `type`, ASCII). Only the body is parsed: the envelope's keys,
 * its type string and the envelope check cost nothing. Null when the frame is not in that form
 * or the body does not parse; `decodeFrame` then decodes it fully (and names the error).
 *
 * Sound because the frame is then exactly prefix + X + suffix with X a JSON value, which is
 * the one parse of the whole frame: the result equals `JSON.parse` of it.
 */
export function decodeCanonicalJson(frame: NetworkFrame, type: string): Envelope | null {
  const { bytes, start, end } = frame;
  const bodyStart = start + 9 + type.length + BODY_KEY.length;
  if (end < bodyStart + 2 || bytes[end - 1] !== 0x7d) return null;
  for (let i = 0; i < BODY_KEY.length; i++) if (bytes[bodyStart - BODY_KEY.length + i] !== BODY_KEY[i]) return null;
  let bodyEnd = end - 1;
  let id: number | undefined;
  let digits = bodyEnd;
  while (digits > bodyStart && bytes[digits - 1]! >= 0x30 && bytes[digits - 1]! <= 0x39) digits--;
  if (digits < bodyEnd) {
    const negative = bytes[digits - 1] === 0x2d;
    const key = (negative ? digits - 1 : digits) - ID_KEY.length;
    let isId = key > bodyStart;
    for (let i = 0; isId && i < ID_KEY.length; i++) isId = bytes[key + i] === ID_KEY[i];
    if (isId) {
      const count = bodyEnd - digits;
      if (count > 16 || (count > 1 && bytes[digits] === 0x30)) return null;
      let value = 0;
      for (let i = digits; i < bodyEnd; i++) value = value * 10 + (bytes[i]! - 0x30);
      if (!Number.isSafeInteger(value)) return null;
      id = negative ? -value : value;
      bodyEnd = key;
    }
  }
  let body: unknown;
  try {
    body = JSON.parse(claimText(frame, bodyStart, bodyEnd));
  } catch {
    return null;
  }
  return id === undefined ? { type, body } : { type, body, id };
}

/** The claim whose bytes `claimString` holds, and whether every byte became one character. */
let textClaim = -1;
let textBytes: Uint8Array | null = null;
let claimString = '';
let claimBytewise = false;

/**
 * The UTF-8 text of `frame.bytes[start, end)`. A claim's bytes are decoded in one call the first
 * time one of its frames asks: when that gives one character per byte (ASCII, the common case),
 * every frame's text is a substring of it, with no native call per frame.
 */
function claimText(frame: NetworkFrame, start: number, end: number): string {
  if (frame.claim !== textClaim || frame.bytes !== textBytes) {
    textClaim = frame.claim;
    textBytes = frame.bytes;
    claimString = utf8Range(frame.bytes, 0, frame.claimEnd);
    claimBytewise = claimString.length === frame.claimEnd;
  }
  return claimBytewise ? claimString.substring(start, end) : utf8Range(frame.bytes, start, end);
}

/** Decodes one frame of `codec`; throws `DecodeError` for bad bytes or a bad envelope. */
export function decodeFrame(bytes: Uint8Array, codec: CodecName): Envelope {
  let value: unknown;
  if (codec === 'json') {
    const text = utf8Text(bytes);
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new DecodeError(ProtocolError.badJson, format(ErrorTable.GSF_ERR_MESSAGE_BAD_JSON.message, [(err as Error).message]));
    }
  } else {
    try {
      value = unpackr.unpack(bytes);
    } catch (err) {
      // msgpackr decodes recursively: a body nested thousands of levels deep runs out of stack.
      if (err instanceof RangeError && err.message.includes('call stack')) {
        throw new DecodeError(ProtocolError.malformed, 'a message must not nest deeper than msgpack decoding can go (thousands of levels)', undefined, trailingId(bytes, true));
      }
      // The id, when it ends the frame as the SDK writes it, answers the request.
      throw new DecodeError(ProtocolError.badMsgpack, format(ErrorTable.GSF_ERR_MESSAGE_BAD_MSGPACK.message, [(err as Error).message]),
        undefined, trailingId(bytes, true));
    }
  }
  return checkEnvelope(value);
}

/**
 * The id of a frame too big (or too deep) to decode, when it ends the frame as the SDK writes it (`…,"id":7}`
 * in JSON; a msgpack map's last entry `id`: n), so that the error frame answers its request;
 * else undefined. Only the last bytes are read.
 */
export function trailingId(bytes: Uint8Array, binary: boolean): number | undefined {
  const end = bytes.length;
  if (!binary) {
    const tail = Buffer.from(bytes.buffer, bytes.byteOffset + Math.max(0, end - 32), Math.min(32, end)).toString('latin1');
    const m = /,"id":(\d{1,16})\}\s*$/.exec(tail);
    const id = m ? Number(m[1]) : NaN;
    return Number.isSafeInteger(id) ? id : undefined;
  }
  for (const length of [1, 2, 3, 5, 9]) {
    const at = end - length;
    if (at < 3 || bytes[at - 3] !== 0xa2 || bytes[at - 2] !== 0x69 || bytes[at - 1] !== 0x64) continue;
    const head = bytes[at]!;
    const view = new DataView(bytes.buffer, bytes.byteOffset + at + 1, length - 1);
    let id: number | undefined;
    if (length === 1 && head <= 0x7f) id = head;
    else if (length === 2 && head === 0xcc) id = view.getUint8(0);
    else if (length === 3 && head === 0xcd) id = view.getUint16(0);
    else if (length === 5 && head === 0xce) id = view.getUint32(0);
    else if (length === 9 && head === 0xcf) id = Number(view.getBigUint64(0));
    if (id !== undefined && Number.isSafeInteger(id)) return id;
  }
  return undefined;
}

/** Decodes `bytes[start, end)` as exactly one msgpack value, or throws. */
function unpackRange(bytes: Uint8Array, start: number, end: number): unknown {
  return unpackRangeWith(unpackr, bytes, start, end);
}

/** How many bytes the msgpack integer starting with `head` takes, or 0 if `head` starts none. */
function intLength(head: number): number {
  if (head <= 0x7f || head >= 0xe0) return 1;
  switch (head) {
    case 0xcc: case 0xd0: return 2;
    case 0xcd: case 0xd1: return 3;
    case 0xce: case 0xd2: case 0xca: return 5;
    case 0xcf: case 0xd3: case 0xcb: return 9;
    default: return 0;
  }
}

/**
 * The envelope of a msgpack frame in the canonical form the SDK writes (a map of `type`,
 * `body` and an optional integer `id`, in that order) whose type the main thread has already
 * matched: only the body (and the id) are decoded, with no envelope object made and checked.
 * Null when the frame is not in that form; `decodeMsgpackFrame` then decodes it fully.
 *
 * Sound as the JSON fast path is: msgpack values are self-delimiting, so when the body decodes
 * to exactly its range and the id to exactly the rest, that is the one parse of the frame.
 */
export function decodeCanonicalMsgpack(frame: NetworkFrame, type: string): Envelope | null {
  const { bytes, start, end } = frame;
  // The map header: fixmap, or map16 as msgpackr writes it; then `a4 "type"` (checked by the main thread).
  let keys = bytes[start]!;
  let head = 1;
  if (keys === 0xde && bytes[start + 1] === 0) {
    keys = 0x80 + bytes[start + 2]!;
    head = 3;
  }
  if (keys !== 0x82 && keys !== 0x83) return null;
  const typeHead = bytes[start + head + 5]!;
  const typeStart = start + head + 5 + (typeHead === 0xd9 ? 2 : 1);
  const bodyStart = typeStart + type.length + 5;
  // `a4 "body"` after the type string (its bytes were matched by the main thread).
  if (bytes[bodyStart - 5] !== 0xa4 || bytes[bodyStart - 4] !== 0x62 || bytes[bodyStart - 3] !== 0x6f
    || bytes[bodyStart - 2] !== 0x64 || bytes[bodyStart - 1] !== 0x79 || bodyStart >= end) return null;
  try {
    if (keys === 0x82) return { type, body: unpackRange(bytes, bodyStart, end) };
    // `a2 "id"` and an integer end the frame: the integer's first byte says how long it is.
    for (const length of [1, 2, 3, 5, 9]) {
      const at = end - length;
      if (at - 3 <= bodyStart || intLength(bytes[at]!) !== length) continue;
      if (bytes[at - 3] !== 0xa2 || bytes[at - 2] !== 0x69 || bytes[at - 1] !== 0x64) continue;
      const id = unpackRange(bytes, at, end);
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) return null;
      return { type, body: unpackRange(bytes, bodyStart, at - 3), id };
    }
  } catch {
    return null;
  }
  return null;
}

/**
 * The envelope of a msgpack frame in a worker's claim buffer, decoded whole from a view of
 * exactly its bytes (so what a bad frame is told depends on its bytes alone).
 */
export function decodeMsgpackFrame(frame: NetworkFrame): Envelope {
  return decodeFrame(frame.bytes.subarray(frame.start, frame.end), 'msgpack');
}

/** `{"type":…,"body":` per message type, for JSON frames built by concatenation. */
const jsonPrefixes = new Map<string, string>();
const MAX_JSON_PREFIXES = 1024;
/** The last type encoded and its prefix (replies mostly repeat a type). */
let lastPrefixType: string | null = null;
let lastPrefix = '';

/**
 * The JSON text of an envelope, as `JSON.stringify({type, body, id})` writes it. The common
 * case (a body without `toJSON`, an integer id or none) is the type's cached prefix plus the
 * body's JSON: about 40% cheaper than stringifying the envelope object.
 */
function jsonFrame(type: string, body: unknown, id: number | undefined): string {
  if ((id !== undefined && !Number.isSafeInteger(id))
    || (typeof body === 'object' && body !== null && typeof (body as { toJSON?: unknown }).toJSON === 'function')) {
    return JSON.stringify(id === undefined ? { type, body } : { type, body, id });
  }
  const text = JSON.stringify(body) as string | undefined;
  if (text === undefined) return JSON.stringify(id === undefined ? { type } : { type, id }); // body omitted, as JSON does
  let prefix = type === lastPrefixType ? lastPrefix : jsonPrefixes.get(type);
  if (prefix === undefined) {
    prefix = `{"type":${JSON.stringify(type)},"body":`;
    if (jsonPrefixes.size < MAX_JSON_PREFIXES) jsonPrefixes.set(type, prefix);
  }
  lastPrefixType = type;
  lastPrefix = prefix;
  return id === undefined ? prefix + text + '}' : prefix + text + ',"id":' + String(id) + '}';
}

/** Encodes an envelope for `codec`: a string (text frame) for json, bytes (binary frame) for msgpack. */
export function encodeFrame(codec: CodecName, type: string, body: unknown, id?: number): string | Uint8Array {
  const frame = encodeFrameTransient(codec, type, body, id);
  // Copy out of msgpackr's shared buffer: the frame outlives the next pack call.
  return typeof frame === 'string' ? frame : Uint8Array.prototype.slice.call(frame);
}

/**
 * As `encodeFrame`, but msgpack bytes are a view of msgpackr's buffer, valid until the next
 * encode: for a caller that copies them at once (the outbound ring).
 */
export function encodeFrameTransient(codec: CodecName, type: string, body: unknown, id?: number): string | Uint8Array {
  if (codec === 'json') return jsonFrame(type, body, id);
  return msgpackFrame(type, body, id);
}

/** Text of a frame for logging. */
export function frameText(frame: string | Uint8Array, binary: boolean): string {
  if (typeof frame === 'string') return frame;
  if (!binary) return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('utf8');
  try {
    return JSON.stringify(unpackr.unpack(frame));
  } catch {
    return `<${frame.byteLength} bytes of bad msgpack>`;
  }
}
