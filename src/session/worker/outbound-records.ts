/**
 * Records of a worker's outbound ring (`outbound-writer.ts`) off its plain write path, on the
 * event thread: an awaiting event's records taken back out of the ring (`hold`), kept on the
 * event as held operations until it finishes, and the size bounds of records too large for
 * the ring (written into a private ring of their own and carried by the flush message).
 */
import type { OutboundWriter } from './outbound-writer.ts';
import { align8, HEADER_BYTES, RingOp } from '../outbound-ring.ts';

// Local copies: module bindings are getters under the CommonJS transform event workers load with.
const OP_PAD = RingOp.pad, OP_INLINE = RingOp.inline, HEADER = HEADER_BYTES, align = align8;

export type Frame = string | Uint8Array;

/** An operation held by an awaiting event, written when it finishes. */
export type HeldOp =
  | { op: 'send'; session: number; frame: Frame }
  | { op: 'close'; session: number; code: number; reason: string }
  | { op: 'group'; session: number; group: string; join: boolean }
  | { op: 'publish'; group: string; json: string; msgpack: Uint8Array }
  | { op: 'broadcast'; ids: readonly number[] | null; json: string | null; msgpack: Uint8Array | null }
  /** Records taken back from the ring (`hold`), with the inline records they point to. */
  | { op: 'records'; bytes: Uint8Array; inline: Uint8Array[] };

/**
 * The records from `start` to `end` of a ring's data area (`bytes`, with its `i32` and `f64`
 * views; `mask`: its capacity less one), pads left out, copied into one held operation. The
 * inline records they point to were the last ones added: they are taken off `inline`.
 */
export function takeRecords(bytes: Uint8Array, i32: Int32Array, f64: Float64Array, mask: number, start: number, end: number,
  inline: Uint8Array[]): HeldOp {
  const parts: Uint8Array[] = [];
  const taken: Uint8Array[] = [];
  let size = 0;
  for (let pos = start; pos !== end;) {
    const p = pos & mask;
    const length = i32[p / 4]!;
    const op = bytes[p + 4];
    if (op !== OP_PAD) {
      const record = bytes.slice(p, p + length);
      if (op === OP_INLINE) {
        taken.push(inline[f64[p / 8 + 2]!]!);
        new Float64Array(record.buffer)[2] = taken.length - 1;
      }
      parts.push(record);
      size += length;
    }
    pos = (pos + length) >>> 0;
  }
  if (taken.length > 0) inline.length -= taken.length;
  const all = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.byteLength;
  }
  return { op: 'records', bytes: all, inline: taken };
}

/** Largest record kept in the ring; larger ones travel with the flush message. */
export function inlineLimit(capacity: number): number {
  return capacity >>> 2;
}

/** A generous size bound for a record, measured by writing it into a counting writer. */
export function estimate(write: (w: OutboundWriter) => void): number {
  let bound = 0;
  const counter = {
    writeSend: (_s: number, f: Frame) => { bound = HEADER + (typeof f === 'string' ? f.length * 3 : f.byteLength); },
    writeClose: (_s: number, _c: number, r: string) => { bound = HEADER + r.length * 3; },
    writeGroup: (_s: number, g: string) => { bound = HEADER + g.length * 3; },
    writePublish: (g: string, j: string, m: Uint8Array) => { bound = HEADER + (g.length + j.length) * 3 + m.byteLength; },
    writeBroadcast: (ids: readonly number[] | null, j: string | null, m: Uint8Array | null) => {
      bound = HEADER + (ids?.length ?? 0) * 8 + (j?.length ?? 0) * 3 + (m?.byteLength ?? 0);
    },
  };
  write(counter as unknown as OutboundWriter);
  return bound;
}

/** The smallest power-of-two ring that keeps a record of `bytes` in it. */
export function ringSizeFor(bytes: number): number {
  let size = 1024;
  while (inlineLimit(size) < align(bytes)) size *= 2;
  return size;
}
