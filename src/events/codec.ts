/**
 * Event payload encoding. Payloads cross threads as bytes through the native queue, so
 * anything msgpack can carry (objects, arrays, strings, numbers, Dates, Sets, binary) works; a
 * Map arrives as a plain object (its keys as strings); functions and class instances with
 * methods do not.
 */
import { Packr, Unpackr } from 'msgpackr';
import { describeError, gsfError } from '../errors.ts';

// Records (shared structures) would need every thread to agree on structure ids: keep them off.
const packr = new Packr({ useRecords: false, moreTypes: true });
const unpackr = new Unpackr({ useRecords: false, moreTypes: true, copyBuffers: true });

/** Encodes a payload; undefined travels as no bytes at all. */
export function encodePayload(payload: unknown): Uint8Array | null {
  if (payload === undefined) return null;
  try {
    return packr.pack(payload);
  } catch (err) {
    throw payloadError(err);
  }
}

/**
 * What an encoder's failure on a payload is thrown as: msgpackr (and plain-pack.ts) encode
 * recursively, so a payload nested thousands of levels deep, or one that refers to itself,
 * runs out of stack, and a value msgpack has no type for (a symbol) is refused:
 * GSF_ERR_BAD_ARGUMENT says so. Other errors are thrown as they are.
 */
export function payloadError(err: unknown): unknown {
  if (err instanceof RangeError) {
    return gsfError('GSF_ERR_BAD_ARGUMENT', `the payload cannot be encoded: it nests too deep or refers to itself (${err.message})`);
  }
  // msgpackr's refusal of a value it has no type for (a symbol).
  if (err instanceof Error && err.constructor === Error && err.message.startsWith('Unknown type')) {
    return gsfError('GSF_ERR_BAD_ARGUMENT', `the payload cannot be encoded: ${err.message}`);
  }
  return err;
}

/** Why an event's payload could not be decoded: msgpack carries a Map keyed by objects, but cannot read it back. */
export function undecodablePayload(err: unknown): Error {
  return gsfError('GSF_ERR_BAD_ARGUMENT', `the event's payload cannot be decoded (${describeError(err)}): `
    + "a Map's keys must be strings, numbers or booleans");
}

/**
 * msgpackr reads strings in JavaScript only while the source ends before this offset; past it,
 * every string goes through its native extractor, a call that costs more than a small value's
 * whole decode. Values anywhere in a larger buffer (a worker's claim) are decoded from a copy
 * when small, with no view or DataView made per value.
 */
const JS_STRINGS_BELOW = 140;
const smallSource = new Uint8Array(JS_STRINGS_BELOW - 1);

/** Where a value from a buffer msgpackr has not read before is decoded (see unpackRange); grows to COPY_AT_MOST. */
let copySource = new Uint8Array(1024);
const COPY_AT_MOST = 64 * 1024;

/**
 * Decodes `bytes[start, end)` with `using` as exactly one msgpack value, or throws. msgpackr
 * keeps a DataView on each source it reads (a `dataView` property it adds): a value in a buffer
 * it has not read before (a native call's effects hand over new ones) is decoded from a copy
 * when it is not large, since making that view and adding that property costs more than the copy.
 */
export function unpackRange(using: Unpackr, bytes: Uint8Array, start: number, end: number): unknown {
  const length = end - start;
  if (length <= smallSource.length) {
    if (end < JS_STRINGS_BELOW && (bytes as { dataView?: DataView }).dataView !== undefined) return using.unpack(bytes, { start, end });
    for (let i = 0; i < length; i++) smallSource[i] = bytes[start + i]!;
    return using.unpack(smallSource, { start: 0, end: length });
  }
  if ((bytes as { dataView?: DataView }).dataView !== undefined || length > COPY_AT_MOST) return using.unpack(bytes, { start, end });
  if (length > copySource.length) copySource = new Uint8Array(Math.min(COPY_AT_MOST, Math.max(length, copySource.length * 2)));
  copySource.set(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
  return using.unpack(copySource, { start: 0, end: length });
}

/** Decodes `length` bytes at `offset` of `bytes`; no bytes decode to undefined. */
export function decodePayload(bytes: Uint8Array, offset: number, length: number): unknown {
  if (length === 0) return undefined;
  return unpackRange(unpackr, bytes, offset, offset + length);
}
