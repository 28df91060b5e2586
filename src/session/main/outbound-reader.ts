/**
 * Main-thread side of the outbound ring (`outbound-ring.ts`): applies the records of every
 * worker's ring in flush order, and delivers what an ended worker's finished events produced.
 *
 * A flush arrives as a note in the native flush mailbox (one wake-up of this thread for every
 * note waiting), or, when it carries records too large for the ring, as a message on the
 * worker's port. Flushes are put back in posting order by their sequence number, because
 * notes and messages of different workers may arrive in either order. A flush whose predecessor never
 * arrives (its worker was ended between numbering and posting) is applied after `gapMs`.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { ChannelHello, WorkerEndHooks } from '../../events/types.ts';
import {
  Control, CONTROL_BYTES, distance, FLAG_ALL, FLAG_BINARY, FLAG_JOIN, HEADER_BYTES, RingOp,
  type OutboundFlush, type SessionOutMessage,
} from '../outbound-ring.ts';
import { currentFlushSeq, FLUSH_SEQ_MASK, flushSeqAfter, nextFlushSeq } from '../worker/outbound-writer.ts';
import { native } from '../../native.ts';

// Local copies: module exports are getters under the CommonJS transform (read per record).
const HEADER = HEADER_BYTES, OP_SEND = RingOp.send, BINARY = FLAG_BINARY;

/** What applying records does: the session listener implements it. */
export interface OutboundTarget {
  /** Writes one frame to a session (a run of one: no cork needed). */
  sendOne(sessionId: number, frame: Uint8Array, binary: boolean): void;
  /** Writes frames to one session; `frames` calls `write` for each, under one cork. */
  sendRun(sessionId: number, frames: (write: (frame: Uint8Array, binary: boolean) => void) => void): void;
  close(sessionId: number, code: number, reason: string): void;
  group(sessionId: number, group: string, join: boolean): void;
  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void;
  broadcast(sessionIds: readonly number[] | null, json: Uint8Array, msgpack: Uint8Array): void;
  error(message: string): void;
}

/** One worker's ring as the main thread sees it. */
class Ring {
  readonly control: Int32Array;
  readonly bytes: Uint8Array;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly mask: number;
  /** Records before this position were applied. */
  applied = 0;
  /** The worker was ended: its ring is dropped once its last records are applied. */
  ended = false;

  constructor(buffer: SharedArrayBuffer) {
    this.control = new Int32Array(buffer, 0, CONTROL_BYTES / 4);
    const capacity = Atomics.load(this.control, Control.capacity);
    this.bytes = new Uint8Array(buffer, CONTROL_BYTES, capacity);
    this.i32 = new Int32Array(buffer, CONTROL_BYTES, capacity / 4);
    this.f64 = new Float64Array(buffer, CONTROL_BYTES, capacity / 8);
    this.mask = capacity - 1;
    this.applied = Atomics.load(this.control, Control.consumed) >>> 0;
  }
}

interface Batch {
  seq: number;
  ring: Ring | null;
  end: number;
  inline?: Uint8Array[];
}

const decoder = new TextDecoder();

export class OutboundReader implements WorkerEndHooks {
  private readonly rings = new Map<number, Ring>();
  private readonly ports = new Set<MessagePort>();
  /** Takes the messages waiting on a worker's port now, by its thread id (see `recover`). */
  private readonly drains = new Map<number, () => void>();
  private expected = currentFlushSeq();
  private readonly early = new Map<number, Batch>();
  /** Notes of a worker whose ring has not arrived yet on its port (it comes first, but slower). */
  private readonly unbound = new Map<number, Batch[]>();
  /**
   * Workers ended here whose threads have not stopped yet (their port is open): a note one of
   * them posts late holds its place in the order, nothing more.
   */
  private readonly endedThreads = new Set<number>();
  private gapTimer: NodeJS.Timeout | null = null;

  /**
   * `gapMs`: how long a flush waits for its predecessor before it goes anyway. A worker ended
   * while it posted has its flush delivered by `recover`, so a gap is only a slow message; the
   * wait is a safety net, and a skip is logged.
   */
  constructor(private readonly target: OutboundTarget, private readonly gapMs = 5000) {
    native.onFlushNotes(() => this.takeNotes());
  }

  /** Receives every flush note in the native mailbox. */
  private takeNotes(): void {
    const notes = native.flushNotesTake();
    for (let i = 0; i < notes.length; i += 3) {
      const threadId = notes[i]!;
      const batch: Batch = { seq: notes[i + 1]!, ring: this.rings.get(threadId) ?? null, end: notes[i + 2]! };
      if (batch.ring !== null || this.endedThreads.has(threadId)) {
        this.receive(batch);
      } else if (flushSeqAfter(batch.seq, this.expected) >= 0) {
        const waiting = this.unbound.get(threadId);
        if (waiting === undefined) this.unbound.set(threadId, [batch]);
        else waiting.push(batch);
      }
      // else: a note of an earlier server of this process (its threads are gone).
    }
  }

  /** A worker's notes that came before its ring, now in their place. */
  private bind(threadId: number, ring: Ring | null): void {
    const waiting = this.unbound.get(threadId);
    if (waiting === undefined) return;
    this.unbound.delete(threadId);
    for (const batch of waiting) this.receive({ ...batch, ring });
  }

  /** Workers whose ring is held (diagnostics and tests): the running pool's, and ended ones not yet let go. */
  get heldRings(): number {
    return this.rings.size;
  }

  /** Ports of workers held (as `heldRings`). */
  get heldPorts(): number {
    return this.ports.size;
  }

  /** Takes a worker's session-out channel. */
  accept(hello: ChannelHello): void {
    const port = hello.port;
    this.ports.add(port);
    let ring: Ring | null = null;
    const take = (m: SessionOutMessage): void => {
      if (m.kind === 'ring') {
        ring = new Ring(m.buffer);
        this.rings.set(m.threadId, ring);
        this.bind(m.threadId, ring);
      } else {
        this.receive({ seq: m.seq, ring, end: m.end >>> 0, inline: (m as OutboundFlush).inline });
      }
    };
    // The worker's end closes when its thread has ended (a reload or resize retired its pool):
    // its last records are applied, then its ring and port are let go, or every worker since
    // the start would keep its ring's shared memory.
    port.once('close', () => {
      this.ports.delete(port);
      this.drains.delete(hello.threadId);
      this.release(hello.threadId);
    });
    port.on('message', take);
    this.drains.set(hello.threadId, () => {
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) take(m.message as SessionOutMessage);
    });
  }

  /** Before a worker's claim goes back to the queue: a place in the flush order for what it produced. */
  reserve(threadId: number): unknown {
    return { threadId, seq: nextFlushSeq() };
  }

  /** Delivers, in the reserved place, what the ended worker's finished events produced. */
  recover(token: unknown, ended: boolean): void {
    const { threadId, seq } = token as { threadId: number; seq: number };
    // Everything the worker posted is in the mailbox or on its port by now (it has stopped):
    // applied first, the port's flushes (those with records too large for the ring) too.
    if (ended) this.drains.get(threadId)?.();
    this.takeNotes();
    const ring = ended ? this.rings.get(threadId) ?? null : null;
    if (ended) {
      // Until its port closes (`release`): the thread may still be stopping.
      if (this.drains.has(threadId)) this.endedThreads.add(threadId);
      // Notes of a worker ended before its ring arrived: their places in the order are kept.
      if (ring === null) this.bind(threadId, null);
    }
    if (ring === null) {
      this.receive({ seq, ring: null, end: 0 });
      return;
    }
    this.deliverEnded(threadId, ring, seq);
  }

  /** What an ended worker's ring holds: the flush it numbered but may not have posted, then its committed records at `seq`. */
  private deliverEnded(threadId: number, ring: Ring, seq: number): void {
    ring.ended = true;
    this.rings.delete(threadId);
    // A flush it numbered but may not have posted: delivered in its place (a copy that did arrive
    // changes nothing, records are applied once by position).
    const posting = Atomics.load(ring.control, Control.postingSeq) - 1;
    if (posting >= 0 && flushSeqAfter(posting, this.expected) >= 0 && !this.early.has(posting)) {
      this.receive({ seq: posting, ring, end: Atomics.load(ring.control, Control.postingEnd) >>> 0 });
    }
    this.receive({ seq, ring, end: Atomics.load(ring.control, Control.committed) >>> 0 });
  }

  /** Forgets the ring of a worker whose thread has ended, once what it posted is applied. */
  private release(threadId: number): void {
    // The thread has stopped: every note it posted is in the mailbox, and none comes later.
    this.takeNotes();
    this.endedThreads.delete(threadId);
    const ring = this.rings.get(threadId);
    if (ring === undefined) return;
    // A thread that exited on its own mid-claim (process.exit, a fatal error) never flushed what
    // its finished events committed, and was not ended here (`recover`): delivered now, after
    // what it posted (the claim's later events wait in the queue until its slot is released).
    if ((Atomics.load(ring.control, Control.committed) >>> 0) !== ring.applied) {
      this.deliverEnded(threadId, ring, nextFlushSeq());
      return;
    }
    ring.ended = true;
    this.rings.delete(threadId);
  }

  /** Ended workers whose late notes are still expected (diagnostics and tests). */
  get endingThreads(): number {
    return this.endedThreads.size;
  }

  private receive(batch: Batch): void {
    if (batch.seq === this.expected) {
      this.expected = (this.expected + 1) & FLUSH_SEQ_MASK;
      this.apply(batch);
      this.drainEarly();
      return;
    }
    if (flushSeqAfter(batch.seq, this.expected) < 0) {
      this.apply(batch); // after a skipped gap: late, but not lost
      return;
    }
    this.early.set(batch.seq, batch);
    this.gapTimer ??= setTimeout(() => this.skipGap(), this.gapMs);
  }

  private drainEarly(): void {
    for (let next = this.early.get(this.expected); next !== undefined; next = this.early.get(this.expected)) {
      this.early.delete(this.expected);
      this.expected = (this.expected + 1) & FLUSH_SEQ_MASK;
      this.apply(next);
    }
    if (this.early.size === 0 && this.gapTimer !== null) {
      clearTimeout(this.gapTimer);
      this.gapTimer = null;
    }
  }

  private skipGap(): void {
    this.gapTimer = null;
    if (this.early.size === 0) return;
    let next = -1;
    for (const seq of this.early.keys()) if (next < 0 || flushSeqAfter(seq, this.expected) < flushSeqAfter(next, this.expected)) next = seq;
    this.target.error(`session outbound: flush ${this.expected} never arrived in ${this.gapMs} ms; ` +
      `applying flush ${next} and those after it`);
    this.expected = next;
    this.drainEarly();
    if (this.early.size > 0) this.gapTimer = setTimeout(() => this.skipGap(), this.gapMs);
  }

  /** Applies a ring's records from where it stands to `batch.end`, then frees the space. */
  private apply(batch: Batch): void {
    const ring = batch.ring;
    if (ring === null) return;
    // A flush may announce records a recovery already applied (or the reverse): positions tell.
    if (distance(ring.applied, batch.end) >= 0x80000000) return;
    let pos = ring.applied;
    while (pos !== batch.end) {
      const p = pos & ring.mask;
      const length = ring.i32[p / 4]!;
      if (length <= 0 || length > ring.bytes.length) {
        this.target.error(`session outbound: a corrupt record at ${pos}; the rest of this flush was dropped`);
        pos = batch.end;
        break;
      }
      pos = (pos + length) >>> 0;
      if (ring.bytes[p + 4] === OP_SEND) pos = this.applySends(ring, p, pos, batch.end);
      else this.applyOne(ring.bytes, ring.i32, ring.f64, p, batch.inline);
    }
    ring.applied = pos;
    Atomics.store(ring.control, Control.consumed, pos | 0);
    Atomics.notify(ring.control, Control.consumed);
  }

  /** A run of sends to one session, starting with the record at `p`: one cork for all (none for one frame). */
  private applySends(ring: Ring, p: number, next: number, end: number): number {
    const sessionId = ring.f64[p / 8 + 2]!;
    const bytes = ring.bytes;
    const first = bytes.subarray(p + HEADER, p + HEADER + ring.i32[p / 4 + 2]!);
    const q0 = next & ring.mask;
    if (next === end || bytes[q0 + 4] !== OP_SEND || ring.f64[q0 / 8 + 2] !== sessionId) {
      this.target.sendOne(sessionId, first, (bytes[p + 5]! & BINARY) !== 0);
      return next;
    }
    let pos = next;
    this.target.sendRun(sessionId, (write) => {
      write(first, (bytes[p + 5]! & BINARY) !== 0);
      while (pos !== end) {
        const q = pos & ring.mask;
        if (bytes[q + 4] !== OP_SEND || ring.f64[q / 8 + 2] !== sessionId) break;
        write(bytes.subarray(q + HEADER, q + HEADER + ring.i32[q / 4 + 2]!), (bytes[q + 5]! & BINARY) !== 0);
        pos = (pos + ring.i32[q / 4]!) >>> 0;
      }
    });
    return pos;
  }

  private applyOne(bytes: Uint8Array, i32: Int32Array, f64: Float64Array, p: number, inline: Uint8Array[] | undefined): void {
    const op = bytes[p + 4]!;
    const flags = bytes[p + 5]!;
    const len1 = i32[p / 4 + 2]!;
    const len2 = i32[p / 4 + 3]!;
    const num = f64[p / 8 + 2]!;
    const at = p + HEADER_BYTES;
    switch (op) {
      case RingOp.pad:
        return;
      case RingOp.send:
        this.target.sendOne(num, bytes.subarray(at, at + len1), (flags & FLAG_BINARY) !== 0);
        return;
      case RingOp.close:
        this.target.close(num, len2, decoder.decode(bytes.subarray(at, at + len1)));
        return;
      case RingOp.group:
        this.target.group(num, decoder.decode(bytes.subarray(at, at + len1)), (flags & FLAG_JOIN) !== 0);
        return;
      case RingOp.publish:
        this.target.publish(decoder.decode(bytes.subarray(at, at + len1)), bytes.subarray(at + len1, at + len1 + len2),
          bytes.subarray(at + len1 + len2, at + len1 + len2 + num));
        return;
      case RingOp.broadcast: {
        const ids = (flags & FLAG_ALL) !== 0 ? null : Array.from(f64.subarray(at / 8, at / 8 + len1 / 8));
        this.target.broadcast(ids, bytes.subarray(at + len1, at + len1 + len2), bytes.subarray(at + len1 + len2, at + len1 + len2 + num));
        return;
      }
      case RingOp.inline: {
        const record = inline?.[num];
        if (record === undefined) {
          this.target.error('session outbound: an inline record is missing from its flush');
          return;
        }
        const buffer = record.buffer.slice(record.byteOffset, record.byteOffset + record.byteLength);
        this.applyOne(new Uint8Array(buffer), new Int32Array(buffer), new Float64Array(buffer), 0, undefined);
        return;
      }
      default:
        this.target.error(`session outbound: unknown record ${op}`);
    }
  }

  stop(): void {
    native.onFlushNotes(null);
    if (this.gapTimer !== null) clearTimeout(this.gapTimer);
    this.gapTimer = null;
    for (const p of this.ports) p.close();
    this.ports.clear();
  }
}
