/**
 * Event payload encoding. Payloads cross threads as bytes through the native queue, so
 * anything msgpack can carry (objects, arrays, strings, numbers, Dates, Maps, binary) works;
 * functions and class instances with methods do not.
 */
import { Packr, Unpackr } from 'msgpackr';

// Records (shared structures) would need every thread to agree on structure ids: keep them off.
const packr = new Packr({ useRecords: false, moreTypes: true });
const unpackr = new Unpackr({ useRecords: false, moreTypes: true, copyBuffers: true });

/** Encodes a payload; undefined travels as no bytes at all. */
export function encodePayload(payload: unknown): Uint8Array | null {
  if (payload === undefined) return null;
  return packr.pack(payload);
}

/** Decodes `length` bytes at `offset` of `bytes`; no bytes decode to undefined. */
export function decodePayload(bytes: Uint8Array, offset: number, length: number): unknown {
  if (length === 0) return undefined;
  return unpackr.unpack(bytes.subarray(offset, offset + length));
}
