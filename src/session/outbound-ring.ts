/**
 * The outbound ring: how session operations (frames to send, closes, group changes) travel
 * from an event worker to the main thread, which owns the sockets.
 *
 * Each worker writes its operations as records into its own SharedArrayBuffer ring and posts
 * a small flush message (`OutboundFlush`) when a claim completes; the main thread applies the
 * records and hands the space back. Because the records sit in shared memory, what the
 * finished events of a worker produced is not lost when that worker is ended (an event timed
 * out): the worker marks, before each event starts, how far its records are final
 * (`commit`), and the main thread delivers up to there (`outbound-reader.ts`).
 *
 * Layout: 64 bytes of Int32 control cells, then the data area of `capacity` bytes (a power of
 * two). Positions are byte counters modulo 2^32; a record never wraps: a pad record fills the
 * rest of the area first. Every record is 8-byte aligned and starts with a 24-byte header:
 *
 *   [0]  int32  record length (header included, a multiple of 8)
 *   [4]  uint8  op (`RingOp`)     [5] uint8 flags     [6] uint16 zero
 *   [8]  int32  len1              [12] int32 len2
 *   [16] float64 num
 *   [24] part 1 (len1 bytes), part 2 (len2 bytes), part 3 (the rest, see each op)
 */

/** Control cells (Int32 indices). */
export const Control = {
  /** Records up to here are final: delivered even if the worker is ended (worker writes). */
  committed: 0,
  /** Records up to here were announced in a flush message (worker writes after posting). */
  posted: 1,
  /** Records up to here were applied; the space before is free (main thread writes, notifies). */
  consumed: 2,
  /** Data area size in bytes. */
  capacity: 3,
  /**
   * The sequence number (plus one; 0: none yet) and end of the flush being posted: written
   * before the message is posted, so the main thread can deliver it if the worker is ended first.
   */
  postingSeq: 4,
  postingEnd: 5,
} as const;

export const CONTROL_BYTES = 64;
export const HEADER_BYTES = 24;
/** Data area of a worker's ring: large enough that a worker rarely waits for the main thread. */
export const DEFAULT_CAPACITY = 4 * 1024 * 1024;

/** Record kinds. */
export const RingOp = {
  /** Fills the rest of the data area; reading continues at offset 0. */
  pad: 0,
  /** A frame to a session. num: session id; part 1: the frame; flags: 1 binary. */
  send: 1,
  /** Close a session. num: session id; len2: close code; part 1: the reason (UTF-8). */
  close: 2,
  /** A session joins a group (flags 1) or leaves it (flags 0). num: session id; part 1: the group. */
  group: 3,
  /** A frame to every member of a group. part 1: group; part 2: JSON frame; part 3 (num bytes): msgpack frame. */
  publish: 4,
  /** One message to many sessions. part 1: session ids (float64 each), none and flags 1: every session; part 2: JSON frame; part 3 (num bytes): msgpack frame. */
  broadcast: 5,
  /** A record too large for the ring, carried by the flush message. num: its index in `OutboundFlush.inline`. */
  inline: 6,
} as const;

export const FLAG_BINARY = 1;
export const FLAG_JOIN = 1;
export const FLAG_ALL = 1;

/** Worker → main on the session-out channel: the worker's ring, once. */
export interface RingHello {
  kind: 'ring';
  threadId: number;
  buffer: SharedArrayBuffer;
}

/**
 * Worker → main on the session-out channel: records up to `end` are ready. `seq` orders flushes
 * of all workers (a process-wide counter), so a session's frames leave in the order its events
 * ran even when its events moved between workers.
 */
export interface OutboundFlush {
  kind: 'flush';
  seq: number;
  end: number;
  /** Records too large for the ring (each one whole record, in the ring's format). */
  inline?: Uint8Array[];
}

export type SessionOutMessage = RingHello | OutboundFlush;

/** Rounds up to a multiple of 8. */
export function align8(n: number): number {
  return (n + 7) & ~7;
}

/** Distance from `from` to `to` on the 2^32 position circle. */
export function distance(from: number, to: number): number {
  return (to - from) >>> 0;
}
