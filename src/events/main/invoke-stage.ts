/**
 * Events the main thread invokes, queued in batches: `server.invoke` and engine events pushed
 * from the main thread are copied into a staging buffer and handed to the native queue once the
 * turn's synchronous code ends, or when the buffer fills (`pushBatch`: one call and one lock per
 * run queue for all of them, instead of one per event). Each gets its id at once, from a block
 * reserved ahead (`reserveEventId(count)`), so `invoke` still returns it.
 *
 * Order is kept: events enter the queue in the order they were staged, and a push that does
 * not go through the stage (a session's opened and closed events) flushes it first. So does a
 * read of the queue's counts.
 */
import { native, PUSH_STRIDE, PushField } from '../../native.ts';
import { workReady } from '../wake.ts';
import { encodePayload, payloadError } from '../codec.ts';
import { NO_ROOM, packPlain } from '../plain-pack.ts';

const RECORDS = 1024;
const INITIAL_BYTES = 64 * 1024;
/** Ids reserved at once. */
const ID_BLOCK = 4096;
// Local copies: module exports are getters under the CommonJS transform.
const F_TAG = PushField.tag, F_NAME = PushField.nameId, F_HANDLER = PushField.handlerId;
const F_SESSION = PushField.sessionId, F_KIND = PushField.kind, F_LENGTH = PushField.payloadLength;
const EMPTY = new Uint8Array(0);
const STRIDE = PUSH_STRIDE;

export class InvokeStage {
  private readonly records = new Float64Array(RECORDS * STRIDE);
  private bytes = new Uint8Array(INITIAL_BYTES);
  private count = 0;
  private used = 0;
  /** The id of the first staged event; the others follow it. */
  private firstId = 0;
  /** The reserved block: ids nextId .. endId - 1 are free. */
  private nextId = 0;
  private endId = 0;
  private scheduled = false;
  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    this.flush();
  };

  /** Stages one event (`payload` is copied) and returns its id. */
  add(tag: number, nameId: number, handlerId: number, sessionId: number, kind: number, payload: Uint8Array | null): number {
    const bytes = payload ?? EMPTY;
    const length = bytes.byteLength;
    this.makeRoom(length);
    if (length > 0) this.bytes.set(bytes, this.used);
    return this.record(tag, nameId, handlerId, sessionId, kind, length);
  }

  /**
   * Stages one event with its payload value, encoded straight into the stage when it is plain
   * data (plain-pack.ts), else by `encodePayload`; returns its id.
   */
  addValue(tag: number, nameId: number, handlerId: number, sessionId: number, kind: number, payload: unknown): number {
    if (payload === undefined) return this.add(tag, nameId, handlerId, sessionId, kind, null);
    this.makeRoom(0);
    let end: number;
    try {
      end = packPlain(payload, this.bytes, this.used);
      if (end === NO_ROOM && this.count > 0) {
        this.flush();
        this.makeRoom(0);
        end = packPlain(payload, this.bytes, 0);
      }
    } catch (err) {
      throw payloadError(err);
    }
    if (end < 0) return this.add(tag, nameId, handlerId, sessionId, kind, encodePayload(payload));
    return this.record(tag, nameId, handlerId, sessionId, kind, end - this.used);
  }

  /**
   * An id for an event this thread pushes itself, after the staged ones (they are flushed
   * first): from the same block, so the thread's ids keep increasing in its invoke order.
   */
  takeId(): number {
    this.flush();
    if (this.nextId === this.endId) {
      this.nextId = native.reserveEventId(ID_BLOCK);
      this.endId = this.nextId + ID_BLOCK;
    }
    return this.nextId++;
  }

  /** Flushes first when the stage has no record, no id or not `length` bytes left for one more event. */
  private makeRoom(length: number): void {
    if (this.count < RECORDS && length <= this.bytes.length - this.used && this.nextId < this.endId) return;
    this.flush();
    if (length > this.bytes.length) this.bytes = new Uint8Array(Math.max(length, this.bytes.length * 2));
    if (this.nextId === this.endId) {
      this.nextId = native.reserveEventId(ID_BLOCK);
      this.endId = this.nextId + ID_BLOCK;
    }
  }

  /** Records the event whose `length` payload bytes were just written at `used`; returns its id. */
  private record(tag: number, nameId: number, handlerId: number, sessionId: number, kind: number, length: number): number {
    const id = this.nextId++;
    if (this.count === 0) this.firstId = id;
    const r = this.count * STRIDE;
    const records = this.records;
    records[r + F_TAG] = tag;
    records[r + F_NAME] = nameId;
    records[r + F_HANDLER] = handlerId;
    records[r + F_SESSION] = sessionId;
    records[r + F_KIND] = kind;
    records[r + F_LENGTH] = length;
    this.used += length;
    this.count++;
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.endOfTurn);
    }
    return id;
  }

  /** Hands the staged events to the queue now, and one idle worker the news. */
  flush(): void {
    if (this.count === 0) return;
    const count = this.count;
    this.count = 0;
    this.used = 0;
    native.pushBatch(this.records, count, this.bytes, this.firstId);
    workReady();
  }
}

/** The main thread's stage (event threads push at once: their invokes wait for their event anyway). */
export const invokeStage = new InvokeStage();

// Whoever reads the queue's counts on the main thread (the dispatcher's idle check, a stop's
// drain, /v1/status, the counters, tests) sees every event invoked before the read: reading
// them hands the stage over first, so the queue never looks emptier than what was invoked.
const rawQueueStats = native.queueStats.bind(native);
const rawWaiting = native.waiting.bind(native);
native.queueStats = () => {
  invokeStage.flush();
  return rawQueueStats();
};
native.waiting = () => {
  invokeStage.flush();
  return rawWaiting();
};
