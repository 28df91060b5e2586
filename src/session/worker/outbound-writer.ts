/**
 * Event-worker side of the outbound ring (`outbound-ring.ts`): session operations of plugin
 * code become records in this worker's ring; the serve loop commits them between events and
 * flushes them when a claim completes (this class is the loop's `WorkerEffects`).
 *
 * An awaiting event's operations are held on the event and written when it finishes, or
 * dropped when it times out (`outbound-records.ts`). The channel to the main thread and the
 * shared cells of the flush order are in `outbound-channel.ts` (re-exported here).
 */
import { threadId, type MessagePort } from 'node:worker_threads';
import { native } from '../../native.ts';
import type { HeldEffects, WorkerEffects } from '../../events/types.ts';
import * as ring from '../outbound-ring.ts';
import type { OutboundFlush } from '../outbound-ring.ts';
import * as channel from './outbound-channel.ts';
import * as records from './outbound-records.ts';
import type { Frame, HeldOp } from './outbound-records.ts';

// Local copies: module bindings are getters under the CommonJS transform event workers load
// with, too slow to read per record.
const { align8, distance, CONTROL_BYTES, DEFAULT_CAPACITY, FLAG_ALL, FLAG_BINARY, FLAG_JOIN, HEADER_BYTES } = ring;
const C_COMMITTED = ring.Control.committed, C_POSTED = ring.Control.posted, C_CONSUMED = ring.Control.consumed;
const C_CAPACITY = ring.Control.capacity, C_POSTING_SEQ = ring.Control.postingSeq, C_POSTING_END = ring.Control.postingEnd;
const OP_PAD = ring.RingOp.pad, OP_SEND = ring.RingOp.send, OP_CLOSE = ring.RingOp.close, OP_GROUP = ring.RingOp.group;
const flushNotePost = native.flushNotePost;
const OP_PUBLISH = ring.RingOp.publish, OP_BROADCAST = ring.RingOp.broadcast, OP_INLINE = ring.RingOp.inline;
const listening = channel.outboundListening, openSessionOut = channel.openSessionOut;
const { inlineLimit, takeRecords, estimate, ringSizeFor } = records;

/** Main thread: whether session operations of workers are read (the listener runs). */
export const setOutboundListening = channel.setOutboundListening;
/** Takes the next flush sequence number (any thread). */
export const nextFlushSeq = channel.nextFlushSeq;
/** The sequence number the next flush will get (main thread, at start). */
export const currentFlushSeq = channel.currentFlushSeq;
/** How far one flush number comes after another (they run modulo 2^30). */
export const flushSeqAfter = channel.flushSeqAfter;
/** Flush numbers run modulo FLUSH_SEQ_MASK + 1. */
export const FLUSH_SEQ_MASK = channel.FLUSH_SEQ_MASK;

type Utf8Buffer = Buffer & { utf8Write(text: string, offset: number, length: number): number };

export class OutboundWriter implements WorkerEffects {
  private readonly sab: SharedArrayBuffer;
  private readonly control: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly text: Utf8Buffer;
  private readonly f64: Float64Array;
  private readonly i32: Int32Array;
  private readonly mask: number;
  private readonly capacity: number;
  /** Next write position. */
  private write = 0;
  /** Position up to which a flush was posted. */
  private posted = 0;
  private inline: Uint8Array[] = [];
  private ringView: Uint8Array | null = null;
  private port: MessagePort | null = null;
  private flushScheduled = false;
  /** Set while plugin code runs outside events: its operations are flushed soon, not by a loop. */
  private readonly flushSoon = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  constructor(capacity = DEFAULT_CAPACITY) {
    this.capacity = capacity;
    this.mask = capacity - 1;
    this.sab = new SharedArrayBuffer(CONTROL_BYTES + capacity);
    this.control = new Int32Array(this.sab, 0, CONTROL_BYTES / 4);
    Atomics.store(this.control, C_CAPACITY, capacity);
    this.bytes = new Uint8Array(this.sab, CONTROL_BYTES, capacity);
    this.text = Buffer.from(this.sab, CONTROL_BYTES, capacity) as Utf8Buffer;
    this.f64 = new Float64Array(this.sab, CONTROL_BYTES, capacity / 8);
    this.i32 = new Int32Array(this.sab, CONTROL_BYTES, capacity / 4);
  }

  /** Opens the session-out channel to the main thread and hands it the ring. */
  connect(): void {
    if (this.port === null) this.port = openSessionOut(this.sab);
  }

  // ---- WorkerEffects ------------------------------------------------------------

  commit(): void {
    Atomics.store(this.control, C_COMMITTED, this.write | 0);
    // Records too large for the ring live in this thread's memory until a flush carries them:
    // posted now, so they reach the main thread even if this thread is ended before its claim's flush.
    if (this.inline.length !== 0) this.flush();
  }

  flush(): void {
    this.flushScheduled = false;
    this.flushTo(this.write);
  }

  /** Posts the records up to `end` (the write position, or the last commit: see `reserve`). */
  private flushTo(end: number): void {
    if (end === this.posted || this.port === null) return;
    const seq = nextFlushSeq();
    // Announced first: if this thread is ended before the post, the main thread posts it for us.
    Atomics.store(this.control, C_POSTING_END, end | 0);
    Atomics.store(this.control, C_POSTING_SEQ, seq + 1);
    const inline = end === this.write ? this.inline : this.inlineUpTo(end);
    if (inline.length === 0) {
      // The common case: a note in the native flush mailbox, which wakes the main thread only
      // if nothing was waiting there (a MessagePort message cost several times as much).
      flushNotePost(threadId, seq, end);
    } else {
      // Records too large for the ring travel with the message; the main thread puts flushes
      // of both ways back in sequence order.
      const message: OutboundFlush = { kind: 'flush', seq, end, inline };
      if (inline === this.inline) this.inline = [];
      this.port.postMessage(message);
    }
    this.posted = end;
    Atomics.store(this.control, C_POSTED, end | 0);
  }

  /**
   * The inline records of the records before `end`, taken off the list; those of the records
   * from `end` on stay, renumbered in their records (they were added last, in ring order).
   */
  private inlineUpTo(end: number): Uint8Array[] {
    const later: number[] = [];
    for (let pos = end; pos !== this.write;) {
      const p = pos & this.mask;
      if (this.bytes[p + 4] === OP_INLINE) later.push(p);
      pos = (pos + this.i32[p / 4]!) >>> 0;
    }
    const taken = this.inline.length - later.length;
    for (const p of later) this.f64[p / 8 + 2] = this.f64[p / 8 + 2]! - taken;
    return this.inline.splice(0, taken);
  }

  hold(event: HeldEffects): void {
    const start = Atomics.load(this.control, C_COMMITTED) >>> 0;
    if (start === this.write) return;
    // The event's records run from its start (committed just before it) to here; none was posted.
    const taken = takeRecords(this.bytes, this.i32, this.f64, this.mask, start, this.write, this.inline);
    this.write = start;
    const held = (event.held ??= []) as HeldOp[];
    held.unshift(taken);
  }

  release(event: HeldEffects): void {
    const held = event.held as HeldOp[] | null;
    event.held = null;
    if (held === null) return;
    for (const h of held) this.writeHeld(h);
    this.commit();
  }

  discard(event: HeldEffects): void {
    event.held = null;
  }

  // ---- operations (plugin code) ---------------------------------------------------

  /**
   * A frame to a session. `event` is the event the operation belongs to (null outside
   * events); an awaiting event's operations are held until it finishes.
   */
  send(session: number, frame: Frame, event: (HeldEffects & { parked: boolean }) | null): void {
    if (!listening()) return;
    if (event !== null && event.parked) {
      this.holdOp(event, { op: 'send', session, frame: typeof frame === 'string' ? frame : frame.slice() });
      return;
    }
    this.writeSend(session, frame);
    this.after(event);
  }

  close(session: number, code: number, reason: string, event: (HeldEffects & { parked: boolean }) | null): void {
    if (!listening()) return;
    if (event !== null && event.parked) this.holdOp(event, { op: 'close', session, code, reason });
    else {
      this.writeClose(session, code, reason);
      this.after(event);
    }
  }

  group(session: number, group: string, join: boolean, event: (HeldEffects & { parked: boolean }) | null): void {
    if (!listening()) return;
    if (event !== null && event.parked) this.holdOp(event, { op: 'group', session, group, join });
    else {
      this.writeGroup(session, group, join);
      this.after(event);
    }
  }

  publish(group: string, json: string, msgpack: Uint8Array, event: (HeldEffects & { parked: boolean }) | null): void {
    if (!listening()) return;
    if (event !== null && event.parked) this.holdOp(event, { op: 'publish', group, json, msgpack: msgpack.slice() });
    else {
      this.writePublish(group, json, msgpack);
      this.after(event);
    }
  }

  broadcast(ids: readonly number[] | null, json: string | null, msgpack: Uint8Array | null,
    event: (HeldEffects & { parked: boolean }) | null): void {
    if (!listening()) return;
    if (event !== null && event.parked) this.holdOp(event, { op: 'broadcast', ids, json, msgpack: msgpack?.slice() ?? null });
    else {
      this.writeBroadcast(ids, json, msgpack);
      this.after(event);
    }
  }

  private holdOp(event: HeldEffects, op: HeldOp): void {
    (event.held ??= []).push(op);
  }

  /** Outside events nobody flushes for us: flush at the end of this turn. */
  private after(event: object | null): void {
    if (event === null && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  private writeHeld(h: HeldOp): void {
    switch (h.op) {
      case 'send': this.writeSend(h.session, h.frame); break;
      case 'close': this.writeClose(h.session, h.code, h.reason); break;
      case 'group': this.writeGroup(h.session, h.group, h.join); break;
      case 'publish': this.writePublish(h.group, h.json, h.msgpack); break;
      case 'broadcast': this.writeBroadcast(h.ids, h.json, h.msgpack); break;
      case 'records': this.writeRecords(h.bytes, h.inline); break;
    }
  }

  /** Writes back records taken by `hold`, one by one (each may land anywhere in the ring). */
  private writeRecords(records: Uint8Array, inline: Uint8Array[]): void {
    const i32 = new Int32Array(records.buffer, records.byteOffset, records.byteLength / 4);
    const f64 = new Float64Array(records.buffer, records.byteOffset, records.byteLength / 8);
    for (let at = 0; at < records.byteLength;) {
      const length = i32[at / 4]!;
      // Room first: making it may flush, and a flush carries (and empties) the inline list.
      const p = this.reserve(length);
      if (records[at + 4] === OP_INLINE) {
        this.inline.push(inline[f64[at / 8 + 2]!]!);
        f64[at / 8 + 2] = this.inline.length - 1;
      }
      this.bytes.set(records.subarray(at, at + length), p);
      this.write = (this.write + length) >>> 0;
      at += length;
    }
  }

  // ---- native writers -------------------------------------------------------------

  /** The whole ring (control cells, then data area), for native code writing send records into it. */
  ringBytes(): Uint8Array {
    return this.ringView ??= new Uint8Array(this.sab);
  }

  /**
   * Where native code may write `event`'s records now (see `ringBytes`), or -1 when they must go
   * through `send`: nobody listens, or the event is awaiting and holds its operations.
   */
  nativePosition(event: { parked: boolean }): number {
    return event.parked || !listening() ? -1 : this.write;
  }

  /** Native code wrote whole records from `nativePosition` up to `end`. */
  nativeWritten(end: number): void {
    this.write = end >>> 0;
  }

  // ---- records ---------------------------------------------------------------------

  private writeSend(session: number, frame: Frame): void {
    if (typeof frame === 'string') {
      const p = this.reserve(HEADER_BYTES + frame.length * 3);
      if (p < 0) return this.writeInline((w) => w.writeSend(session, frame));
      const n = this.text.utf8Write(frame, p + HEADER_BYTES, frame.length * 3);
      this.finish(p, OP_SEND, 0, n, 0, session, HEADER_BYTES + n);
    } else {
      const p = this.reserve(HEADER_BYTES + frame.byteLength);
      if (p < 0) return this.writeInline((w) => w.writeSend(session, frame));
      const length = frame.byteLength;
      const at = p + HEADER_BYTES;
      // A small frame is copied by a loop: set() is a runtime call that costs more than that.
      if (length <= 64) for (let i = 0; i < length; i++) this.bytes[at + i] = frame[i]!;
      else this.bytes.set(frame, at);
      this.finish(p, OP_SEND, FLAG_BINARY, length, 0, session, HEADER_BYTES + length);
    }
  }

  private writeClose(session: number, code: number, reason: string): void {
    const p = this.reserve(HEADER_BYTES + reason.length * 3);
    if (p < 0) return this.writeInline((w) => w.writeClose(session, code, reason));
    const n = this.text.utf8Write(reason, p + HEADER_BYTES, reason.length * 3);
    this.finish(p, OP_CLOSE, 0, n, code, session, HEADER_BYTES + n);
  }

  private writeGroup(session: number, group: string, join: boolean): void {
    const p = this.reserve(HEADER_BYTES + group.length * 3);
    if (p < 0) return this.writeInline((w) => w.writeGroup(session, group, join));
    const n = this.text.utf8Write(group, p + HEADER_BYTES, group.length * 3);
    this.finish(p, OP_GROUP, join ? FLAG_JOIN : 0, n, 0, session, HEADER_BYTES + n);
  }

  private writePublish(group: string, json: string, msgpack: Uint8Array): void {
    const p = this.reserve(HEADER_BYTES + group.length * 3 + json.length * 3 + msgpack.byteLength);
    if (p < 0) return this.writeInline((w) => w.writePublish(group, json, msgpack));
    let at = p + HEADER_BYTES;
    const g = this.text.utf8Write(group, at, group.length * 3);
    at += g;
    const j = this.text.utf8Write(json, at, json.length * 3);
    at += j;
    this.bytes.set(msgpack, at);
    this.finish(p, OP_PUBLISH, 0, g, j, msgpack.byteLength, at + msgpack.byteLength - p);
  }

  private writeBroadcast(ids: readonly number[] | null, json: string | null, msgpack: Uint8Array | null): void {
    const count = ids?.length ?? 0;
    const jsonText = json ?? '';
    const packed = msgpack ?? new Uint8Array(0);
    const p = this.reserve(HEADER_BYTES + count * 8 + jsonText.length * 3 + packed.byteLength);
    if (p < 0) return this.writeInline((w) => w.writeBroadcast(ids, json, msgpack));
    for (let i = 0; i < count; i++) this.f64[(p + HEADER_BYTES) / 8 + i] = ids![i]!;
    let at = p + HEADER_BYTES + count * 8;
    const j = this.text.utf8Write(jsonText, at, jsonText.length * 3);
    at += j;
    this.bytes.set(packed, at);
    this.finish(p, OP_BROADCAST, ids === null ? FLAG_ALL : 0, count * 8, j, packed.byteLength, at + packed.byteLength - p);
  }

  private finish(p: number, op: number, flags: number, len1: number, len2: number, num: number, used: number): void {
    const length = align8(used);
    this.i32[p / 4] = length;
    this.bytes[p + 4] = op;
    this.bytes[p + 5] = flags;
    this.bytes[p + 6] = 0;
    this.bytes[p + 7] = 0;
    this.i32[p / 4 + 2] = len1;
    this.i32[p / 4 + 3] = len2;
    this.f64[p / 8 + 2] = num;
    this.write = (this.write + length) >>> 0;
  }

  /**
   * Room for a record of at most `need` bytes: its offset in the data area, or -1 when it is
   * too large for the ring. Waits for the main thread when the ring is full.
   */
  private reserve(need: number): number {
    const size = align8(need);
    if (size > inlineLimit(this.capacity)) return -1;
    for (;;) {
      const phys = this.write & this.mask;
      const pad = phys + size > this.capacity ? this.capacity - phys : 0;
      const used = distance(Atomics.load(this.control, C_CONSUMED) >>> 0, this.write);
      if (used + pad + size <= this.capacity) {
        if (pad > 0) {
          this.i32[phys / 4] = pad;
          this.bytes[phys + 4] = OP_PAD;
          this.write = (this.write + pad) >>> 0;
        }
        return this.write & this.mask;
      }
      // Full: what is written must reach the main thread before it can make room. The records
      // of earlier events go first, and the main thread's reading them may be enough: the
      // current event's records stay unposted, so an event that awaits can still hold them
      // back (and drop them if it times out). Only when its own records fill the ring do they
      // go now, as if the event ended here (docs/decisions.md).
      const consumed = Atomics.load(this.control, C_CONSUMED);
      const committed = Atomics.load(this.control, C_COMMITTED) >>> 0;
      if (committed !== this.posted && distance(this.posted, committed) <= distance(this.posted, this.write)) this.flushTo(committed);
      if (this.posted === consumed >>> 0) {
        // Nothing posted is left to read: the ring holds only what is not posted yet.
        this.commit();
        this.flush();
      }
      Atomics.wait(this.control, C_CONSUMED, consumed, 100);
    }
  }

  /** Writes one record into a private buffer carried by the next flush message. */
  private writeInline(write: (w: OutboundWriter) => void): void {
    // Sized for the record; a writer with one private ring does the encoding.
    const probe = estimate(write);
    const w = new OutboundWriter(ringSizeFor(probe));
    write(w);
    const record = new Uint8Array(w.sab, CONTROL_BYTES, w.write).slice();
    // Room first: making it may flush, and a flush carries (and empties) the inline list.
    const p = this.reserve(HEADER_BYTES);
    this.inline.push(record);
    this.finish(p, OP_INLINE, 0, 0, 0, this.inline.length - 1, HEADER_BYTES);
  }
}
