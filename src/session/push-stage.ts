/**
 * Client messages queued as network events in batches. The main thread copies each frame
 * into a staging buffer as it arrives and hands the whole set to the native queue once per
 * event-loop turn (`pushBatch`: one call and one lock for all of them, instead of one per
 * message), then wakes an event worker if none is awake and looking for work.
 *
 * Order is kept: a tag's events enter the queue in arrival order, and every other push the
 * session service makes on a session tag (opened, closed) flushes the stage first.
 */
import { native, EventKind, PUSH_STRIDE, PushField } from '../native.ts';
import { workReady } from '../events/wake.ts';
import { invokeStage } from '../events/main/invoke-stage.ts';
import { intern } from '../events/runtime.ts';
import { encodePayload } from '../events/codec.ts';
import { CLOSED_EVENT, OPENED_EVENT } from './worker/message-event.ts';

const INITIAL_RECORDS = 1024;
// Local copies: module exports are getters under the CommonJS transform.
const F_TAG = PushField.tag, F_NAME = PushField.nameId, F_HANDLER = PushField.handlerId;
const F_SESSION = PushField.sessionId, F_KIND = PushField.kind, F_LENGTH = PushField.payloadLength;
const K_NETWORK = EventKind.network;
const STRIDE = PUSH_STRIDE;
const INITIAL_BYTES = 256 * 1024;

export class PushStage {
  private records = new Float64Array(INITIAL_RECORDS * STRIDE);
  private bytes = new Uint8Array(INITIAL_BYTES);
  private count = 0;
  private used = 0;
  private scheduled = false;
  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    this.flush();
  };

  constructor(private readonly handlerId: number) {}

  /** Nothing staged (the first message of an event-loop turn is next). */
  get empty(): boolean {
    return this.count === 0;
  }

  /** Stages one network event on the session's tag; `frame` is copied. */
  add(sessionId: number, nameId: number, frame: Uint8Array): void {
    const length = frame.byteLength;
    if (this.count * STRIDE === this.records.length || length > this.bytes.length - this.used) {
      this.flush();
      if (length > this.bytes.length) this.bytes = new Uint8Array(Math.max(length, this.bytes.length * 2));
    }
    const r = this.count * STRIDE;
    const records = this.records;
    records[r + F_TAG] = sessionId;
    records[r + F_NAME] = nameId;
    records[r + F_HANDLER] = this.handlerId;
    records[r + F_SESSION] = sessionId;
    records[r + F_KIND] = K_NETWORK;
    records[r + F_LENGTH] = length;
    this.bytes.set(frame, this.used);
    this.used += length;
    this.count++;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.endOfTurn);
    }
  }

  /** Hands the staged events to the queue now (before any other push on a session tag). */
  flush(): void {
    invokeStage.flush(); // events the main thread invoked before these messages go first
    if (this.count === 0) return;
    const count = this.count;
    this.count = 0;
    this.used = 0;
    native.pushBatch(this.records, count, this.bytes);
    workReady();
  }
}

/**
 * Closed events queued, by event id, with what they carry: one cancelled with its tag's queued
 * events (an event of the session timed out) is queued again (`requeueCancelledClosed`). Bounded:
 * the most recent ones (a closed event runs within moments of its queuing).
 */
const closedQueued = new Map<number, { sessionId: number; payload: unknown }>();
const CLOSED_KEPT = 10_000;

/** Queues a session's opened or closed engine event on its tag (flush the stage of its messages first). */
export function pushEngineEvent(event: string, sessionId: number, payload: unknown): void {
  // Events this thread invoked before it go first (on the session's tag too); its id follows theirs.
  const id = invokeStage.takeId();
  native.push(sessionId, intern(event === OPENED_EVENT ? '_session_opened' : '_session_closed'), intern(event), sessionId,
    EventKind.engine, encodePayload(payload), id);
  if (event === CLOSED_EVENT) {
    closedQueued.set(id, { sessionId, payload });
    if (closedQueued.size > CLOSED_KEPT) closedQueued.delete(closedQueued.keys().next().value!);
  }
  // Woken now: with no message behind it, an idle server would run it only at a worker's next look (up to 250 ms).
  workReady();
}

/**
 * Closed events among `ids`, cancelled before they ran (queued behind an event of their session
 * that timed out), are queued again: a session's closed hooks run once, after the event that
 * timed out, as when the session closes later. Returns how many.
 */
export function requeueCancelledClosed(ids: readonly number[]): number {
  let n = 0;
  for (const id of ids) {
    const closed = closedQueued.get(id);
    if (closed === undefined) continue;
    closedQueued.delete(id);
    pushEngineEvent(CLOSED_EVENT, closed.sessionId, closed.payload);
    n++;
  }
  return n;
}
