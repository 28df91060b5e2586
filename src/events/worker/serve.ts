/**
 * Event worker (a piscina worker thread): loads every plugin, then runs one serve task for
 * its whole life. The serve loop claims ready events from the native queue in batches, runs
 * them one after another and completes the claim; when nothing is ready it spins briefly, then
 * sleeps until woken (`wake.ts`).
 *
 * An event whose handler awaits is parked: it keeps its tag busy (no later event of that tag
 * runs) but frees the worker, which goes on with other tags' events. When the handler's promise
 * settles the event finishes on its own. The worker's start-up, its flags' re-read and its end
 * on a fault of the loop are in `serve-thread.ts`; this module keeps the loop and its state.
 */
import { workerData } from 'node:worker_threads';
import {
  native, COMPLETE_STRIDE, CompleteField, CompleteFlag, CompleteResult, ContextCell, EventKind, ProgressField,
  RunState, TAKE_STRIDE, TakeField,
} from '../../native.ts';
import type { ThreadContext } from '../../hooks/thread-context.ts';
import { decodePayload, undecodablePayload } from '../codec.ts';
import { RunningEvent, nameOf, type HandlerEntry, type NativeEventHandler } from '../runtime.ts';
import { currentEpoch, workReady } from '../wake.ts';
import { AwaitCap } from './await-cap.ts';
import type { AwaitingEvents } from './awaiting.ts';
import { type IdleWaiter, yieldToLoop } from './idle.ts';
import type { EventLines } from './lines.ts';
import { setUpWorker, workerFailed } from './serve-thread.ts';
import type { NetworkFrame, ServeResult, ServeTask, WorkerEffects, WorkerInit } from '../types.ts';
import { dropSent } from '../drop-sent.ts';

export { workerThread } from './serve-thread.ts';

// Local copies: module exports are live bindings (getters) under the CommonJS transform
// workers load with, too slow to read per event.
const T_ID = TakeField.id, T_TAG = TakeField.tag, T_NAME = TakeField.nameId, T_HANDLER = TakeField.handlerId;
const T_SESSION = TakeField.sessionId, T_KIND = TakeField.kind, T_OFFSET = TakeField.payloadOffset;
const T_LENGTH = TakeField.payloadLength, T_AGE = TakeField.queueAgeMs;
const F_HANDLER = CompleteField.handlerMs, F_IO = CompleteField.ioWaitMs, F_NAME = CompleteField.nameId;
const F_FLAGS = CompleteField.flags, F_START = CompleteField.startMs;
const FLAG_FAILED = CompleteFlag.failed, FLAG_NOT_RUN = CompleteFlag.notRun;
const P_INDEX = ProgressField.index, P_START = ProgressField.startUs, P_NAME = ProgressField.nameId;
const R_REVOKED = CompleteResult.revoked, R_MADE_READY = CompleteResult.madeReady;
const K_NETWORK = EventKind.network;
const C_RUN_SLOT = ContextCell.runSlot, C_RUN_FROM = ContextCell.runFrom, C_RUN_TO = ContextCell.runTo;
const C_RUN_STARTED = ContextCell.runStarted, C_RUN_START_MS = ContextCell.runStartMs, C_RUN_NEXT = ContextCell.runNext;
const C_RUN_STATE = ContextCell.runState, RUN_STOPPED = RunState.stopped, RUN_REVOKED = RunState.revoked;
const runEvents = native.pluginRunEvents;
/** This thread's native call cells (pluginRunEvents reads its range there). */
const runCells = new Float64Array(native.pluginContextView());
/** runOne's `called` when the handler has not been called yet. */
const NOT_CALLED: unknown = Symbol('not called');
const TAKE_N = TAKE_STRIDE, COMPLETE_N = COMPLETE_STRIDE;
const core = native;
const Running = RunningEvent;
const nameOfId = nameOf, decodeUserPayload = decodePayload;
// The global `performance` is a lazy getter on Node 20: read it once.
const clock = performance;

// This worker as set up by serve-thread.ts, in variables of this module (read per event).
let runtime!: ThreadContext['runtime'];
let log!: ThreadContext['log'];
let effects: WorkerEffects | null = null;
let slot = -1;
let idle!: IdleWaiter;
/** The progress cells; this worker's start at `cell`. */
const progress = new Int32Array(native.slotProgressView());
/**
 * Which handlers' events park, shared with every thread: set when one parks, cleared when one
 * finishes without parking. A claim then takes no more of a tag after such an event (its later
 * events would only be skipped and handed back), and takes other tags' events instead.
 */
const parkHints = new Uint8Array(native.parkHintsView());
let cell = -1;
/** The failure, slow-event and unknown-event lines (slow_event_log_threshold_in_ms re-read with the flags). */
let lines!: EventLines;
/** Events of this worker that await. */
let awaiting!: AwaitingEvents;
/** Re-reads the flags if the configuration changed (once per loop turn). */
let refreshFlags!: () => void;
// No top-level await: piscina's loader cannot load an entry module that uses it under tsx.
const ready = setUpWorker(workerData as WorkerInit, progress, awaitedFinished).then((s) => {
  ({ effects, slot, cell, idle, lines, awaiting, refreshFlags } = s);
  ({ runtime, log } = s.thread);
});

/**
 * A claim covers about BATCH_TARGET_MS of measured work: trivial events come 64 at a time,
 * slow ones one at a time, so a long handler never holds other tags' events hostage while
 * another worker sits idle. Starts pessimistic (slow) and adapts per batch.
 */
const BATCH_TARGET_MS = 1;
let perEventMs = BATCH_TARGET_MS;
let meta = new Float64Array(0);
let timings = new Float64Array(0);
let bytes = new Uint8Array(1 << 20);
/** The payload of every network event (no view object per frame). */
const frame: NetworkFrame = { bytes, start: 0, end: 0, claim: 0, claimEnd: 0 };
/** The last handler and name looked up: a batch's events mostly share them. */
let lastHandlerId = -1;
let lastEntry: HandlerEntry | undefined;
let lastNameId = -1;
let lastName = '';
/** When the last event finished (`clock.now()`): a synchronous event's end is the next one's start. */
let lastEnd = 0;
/** Tags of the open claim held by an event that parked in it: their later events are skipped. */
const parkedTags = new Set<number>();
const totals: ServeResult = { ran: 0, failed: 0, revoked: false };
/** Events this thread lets await at once (lowered while object commits conflict). */
let awaitCap = new AwaitCap(0, 0);
/** `totals.ran` as last added to the `engine/events_run` counter (once per claim). */
let countedRan = 0;

/** An awaiting event finished (`AwaitingEvents`): counted as run. */
function awaitedFinished(failed: boolean): void {
  totals.ran++;
  countedRan++;
  if (failed) totals.failed++;
  awaitCap.finishedOne(runtime.objects?.conflicts ?? 0);
}

function ensureCapacity(maxBatch: number): void {
  if (meta.length < maxBatch * TAKE_STRIDE) {
    meta = new Float64Array(maxBatch * TAKE_STRIDE);
    timings = new Float64Array(maxBatch * COMPLETE_STRIDE);
  }
}

/** Records a synchronous event's timings into the claim; its held children are queued. */
function finishSync(ev: RunningEvent, t: number, start: number, queueMs: number, entry: HandlerEntry, err: unknown): void {
  runtime.running = null;
  if (parkHints[entry.id] === 1) parkHints[entry.id] = 0;
  lastEnd = clock.now();
  const handlerMs = Math.max(0, lastEnd - start - ev.ioWaitMs);
  timings[t + F_HANDLER] = handlerMs;
  timings[t + F_IO] = ev.ioWaitMs;
  timings[t + F_NAME] = ev.nameId;
  if (ev.heldInvokes !== null) runtime.releaseInvokes(ev);
  if (err !== undefined) {
    timings[t + F_FLAGS] = FLAG_FAILED;
    core.counterIncrease('engine', 'events_failed', 1);
  }
  if (err !== undefined || queueMs + handlerMs + ev.ioWaitMs > lines.slowMs) lines.report(ev, entry, err, queueMs, handlerMs, ev.ioWaitMs);
}

/** Parks event `i` (see `AwaitingEvents.park`); false if the slot was revoked. */
function park(i: number, ev: RunningEvent, entry: HandlerEntry, pending: Promise<unknown>, start: number, queueMs: number): boolean {
  runtime.running = null;
  lastEnd = clock.now();
  if (parkHints[entry.id] === 0) parkHints[entry.id] = 1;
  if (!awaiting.park(i, ev, entry, pending, start, lastEnd, queueMs, timings[i * COMPLETE_N + F_START]!)) return false;
  parkedTags.add(ev.tag);
  return true;
}

/** The handler entry of `handlerId` (the last one looked up is kept: a claim's events mostly share it). */
function entryFor(handlerId: number): HandlerEntry | undefined {
  if (handlerId === lastHandlerId) return lastEntry;
  const entry = runtime.handlersById.get(handlerId);
  // Only found handlers are remembered: one registered later must be found then.
  if (entry !== undefined) {
    lastEntry = entry;
    lastHandlerId = handlerId;
  }
  return entry;
}

/** The RunningEvent of claimed event `i`. */
function eventAt(i: number): RunningEvent {
  const m = i * TAKE_N;
  const nameId = meta[m + T_NAME]!;
  if (nameId !== lastNameId) {
    lastName = nameOfId(nameId);
    lastNameId = nameId;
  }
  return new Running(runtime, meta[m + T_ID]!, meta[m + T_TAG]!, meta[m + T_KIND]!, meta[m + T_SESSION]!, lastName, nameId);
}

/**
 * Runs claimed event `i` from `start`: returns 0 when it finished, 1 when it parked, -1 when the
 * slot was revoked meanwhile. `called`: the outcome of a native handler's call already made for
 * it (pluginRunEvents), or NOT_CALLED.
 */
function runOne(i: number, queueMs: number, start: number, called: unknown): number {
  const m = i * TAKE_N;
  const t = i * COMPLETE_N;
  timings[t + F_NAME] = meta[m + T_NAME]!;
  const entry = entryFor(meta[m + T_HANDLER]!);
  const kind = meta[m + T_KIND]!;
  const ev = eventAt(i);
  if (!entry) {
    lines.unknown(ev, nameOfId(meta[m + T_HANDLER]!));
    timings[t + F_FLAGS] = FLAG_NOT_RUN;
    return 0;
  }
  const length = meta[m + T_LENGTH]!;
  const offset = meta[m + T_OFFSET]!;
  // Network events carry the client's raw frame; their handler decodes it before it returns or awaits.
  let payload: unknown;
  if (kind === K_NETWORK) {
    frame.start = offset;
    frame.end = offset + length;
    payload = frame;
  } else if (entry.rawPayload) {
    // A native handler decodes the bytes itself: no decode here and encode again there.
    payload = length === 0 ? null : bytes.subarray(offset, offset + length);
  } else if (length > 0) {
    try {
      payload = decodeUserPayload(bytes, offset, length);
    } catch (err) {
      // msgpack carries what it cannot read back (a Map whose keys are objects): the event
      // fails, logged as a failed handler is, and its thread serves on.
      finishSync(ev, t, start, queueMs, entry, undecodablePayload(err));
      return 0;
    }
  }
  runtime.running = ev;
  ev.payload = payload;
  let result: unknown;
  try {
    if (called !== NOT_CALLED) result = entry.native!.settle(called, ev);
    else result = entry.async ? runtime.call(true, ev, entry.fn, payload, ev, undefined) : entry.fn(payload, ev);
  } catch (err) {
    // Its object changes are discarded, and its children, counter changes and sends with them (a message handler drops its own).
    if (ev.tx !== undefined) {
      runtime.objects?.discard(ev);
      runtime.dropInvokes(ev);
      if (kind !== K_NETWORK) dropSent(runtime, ev);
    }
    finishSync(ev, t, start, queueMs, entry, err ?? new Error('handler threw a nullish value'));
    return 0;
  }
  if (result instanceof Promise) return park(i, ev, entry, result, start, queueMs) ? 1 : -1;
  // A synchronous handler that changed objects waits for their commit like an awaiting one;
  // one that only read them finishes here.
  if (ev.tx !== undefined && !runtime.objects!.finishClean(ev, timings, t)) return park(i, ev, entry, Promise.resolve(), start, queueMs) ? 1 : -1;
  finishSync(ev, t, start, queueMs, entry, undefined);
  return 0;
}

/**
 * Runs claimed events from `i` (whose handler is `own`'s) in the addon while they are plain calls
 * of that handler (`native.pluginRunEvents`). Returns the index to go on from, or -1 when the
 * slot was revoked. The event whose call left something to do is finished here through runOne
 * with its call's outcome.
 */
function runNative(own: NativeEventHandler, i: number, n: number, started: number, claimStart: number): number {
  // What earlier events produced is committed first, as before each event.
  effects?.commit();
  const c = runCells;
  c[C_RUN_SLOT] = slot;
  c[C_RUN_FROM] = i;
  c[C_RUN_TO] = n;
  c[C_RUN_STARTED] = started;
  c[C_RUN_START_MS] = lastEnd - claimStart;
  const outcome = runEvents(own.handler, meta, timings, bytes);
  const next = c[C_RUN_NEXT]!;
  const state = c[C_RUN_STATE]!;
  lastEnd = clock.now();
  const slowMs = lines.slowMs;
  for (let k = i; k < next; k++) {
    totals.ran++;
    const t = k * COMPLETE_N;
    const queueMs = meta[k * TAKE_N + T_AGE]! + timings[t + F_START]!;
    if (queueMs + timings[t + F_HANDLER]! > slowMs) lines.report(eventAt(k), entryFor(meta[k * TAKE_N + T_HANDLER]!)!, undefined, queueMs, timings[t + F_HANDLER]!, 0);
  }
  if (next > i) parkHints[meta[i * TAKE_N + T_HANDLER]!] = 0;
  if (state === RUN_REVOKED) return -1;
  if (state !== RUN_STOPPED) return next;
  // Event `next` is started and its handler called: finish it as if the handler had just returned.
  const startMs = timings[next * COMPLETE_N + F_START]!;
  const done = runOne(next, meta[next * TAKE_N + T_AGE]! + startMs, claimStart + startMs, outcome);
  if (done < 0) return -1;
  if (timings[next * COMPLETE_N + F_FLAGS] === FLAG_FAILED) totals.failed++;
  if (done === 0) totals.ran++;
  return next + 1;
}

/** Runs a claim of `n` events; false if the slot was revoked (an event of it timed out). */
function runClaim(n: number): boolean {
  // Loops, not fill() and clear(): both are runtime calls, and clear() allocates a new table.
  for (let k = n * COMPLETE_N - 1; k >= 0; k--) timings[k] = 0;
  frame.claim++;
  frame.claimEnd = meta[(n - 1) * TAKE_N + T_OFFSET]! + meta[(n - 1) * TAKE_N + T_LENGTH]!;
  if (parkedTags.size > 0) parkedTags.clear();
  const claimStart = clock.now();
  lastEnd = claimStart;
  let started = -1;
  for (let i = 0; i < n; i++) {
    // The later events of a parked event's tag wait for it: the queue takes them back.
    if (parkedTags.size > 0) {
      if (parkedTags.has(meta[i * TAKE_N + T_TAG]!)) continue;
    } else if (meta[i * TAKE_N + T_KIND] !== K_NETWORK) {
      // A run of a native handler's events runs in the addon, without JavaScript per event.
      const own = entryFor(meta[i * TAKE_N + T_HANDLER]!)?.native;
      if (own != null) {
        const next = runNative(own, i, n, started, claimStart);
        if (next < 0) return false;
        started = runCells[C_RUN_STARTED]!;
        if (next > i) {
          i = next - 1;
          continue;
        }
      }
    }
    // Start event i in the progress cells (no native call): the start, the name slot, then
    // the swap that a timeout of this slot makes fail. What earlier events produced is
    // committed first, so it survives if this event never ends.
    const startMs = lastEnd - claimStart;
    progress[cell + P_START] = Math.min(startMs * 1000, 0x7fffffff);
    progress[cell + P_NAME] = 0;
    effects?.commit();
    if (Atomics.compareExchange(progress, cell + P_INDEX, started, i) !== started) return false;
    started = i;
    timings[i * COMPLETE_N + F_START] = startMs;
    const outcome = runOne(i, meta[i * TAKE_N + T_AGE]! + startMs, lastEnd, NOT_CALLED);
    if (outcome < 0) return false;
    if (timings[i * COMPLETE_N + F_FLAGS] === FLAG_FAILED) totals.failed++;
    if (outcome === 0) totals.ran++;
  }
  const now = clock.now();
  perEventMs = 0.5 * perEventMs + 0.5 * Math.max(0.0001, (now - claimStart) / n);
  if (totals.ran !== countedRan) {
    core.counterIncrease('engine', 'events_run', totals.ran - countedRan);
    countedRan = totals.ran;
  }
  return true;
}

/** Claims ready events; the count, 0 for none, -1 when the slot was revoked. */
function claim(maxBatch: number): number {
  const batch = Math.max(1, Math.min(maxBatch, Math.floor(BATCH_TARGET_MS / perEventMs)));
  let n = core.take(slot, meta, bytes, batch);
  if (n < -1) {
    bytes = new Uint8Array(Math.max(-n, bytes.length * 2));
    frame.bytes = bytes;
    n = core.take(slot, meta, bytes, batch);
  }
  return n;
}

function flushEffects(): void {
  awaiting.flushDue = false;
  effects?.flush();
}

/** The piscina task: serve events until the epoch ends. */
export default async function serve(task: ServeTask): Promise<ServeResult> {
  if (slot < 0) await ready;
  if (task.warmup) return { ran: 0, failed: 0, revoked: false };
  try {
    return await serveLoop(task);
  } catch (err) {
    workerFailed(log, err); // the loop itself failed (never a handler: those are caught per event)
  } finally {
    lines.flushAll();
  }
}

async function serveLoop(task: ServeTask): Promise<ServeResult> {
  ensureCapacity(task.maxBatch);
  core.slotAttachTask(slot, task.taskId);
  totals.ran = 0;
  totals.failed = 0;
  countedRan = 0;
  awaitCap = new AwaitCap(task.maxAwaiting, runtime.objects?.conflicts ?? 0);
  let lastYield = clock.now();
  while (currentEpoch() === task.epoch) {
    refreshFlags();
    awaiting.letGoOfTimedOut();
    // Each claimed event may await: claim no more than the cap leaves room for.
    const room = awaitCap.value - awaiting.size;
    const n = room > 0 ? claim(Math.min(task.maxBatch, room)) : 0;
    if (n === -1) return { ...totals, revoked: true };
    if (n > 0) {
      if (!runClaim(n)) {
        flushEffects();
        return { ...totals, revoked: true };
      }
      // Session frames leave before the claim completes: the next event of a tag may run elsewhere.
      flushEffects();
      const result = core.complete(slot, n, timings);
      if (result === R_REVOKED) return { ...totals, revoked: true };
      if (result === R_MADE_READY) workReady();
      // Awaiting events resume only when the thread's event loop runs.
      const now = clock.now();
      if (awaiting.size > 0 || now - lastYield >= task.budgetMs) {
        await yieldToLoop();
        awaiting.turn++;
        lastYield = clock.now();
      }
      continue;
    }
    if (awaiting.flushDue) flushEffects();
    // Commits in flight keep the loop too: their answers must be heard (those of timed-out events included).
    await idle.wait(room > 0, awaiting.size > 0 || awaiting.flushDue || (runtime.objects?.inFlight ?? 0) > 0);
    awaiting.turn++;
    lastYield = clock.now();
    if (awaiting.flushDue) flushEffects();
  }
  // The epoch ended (pool replaced, server stopping): finish what awaits, then leave. Not
  // through the shared sleep cells: this worker must not take wake-ups meant for serving ones.
  while (awaiting.size > 0 && currentEpoch() !== -1) {
    await awaiting.anyFinished(50);
    awaiting.letGoOfTimedOut();
    if (awaiting.flushDue) flushEffects();
  }
  flushEffects();
  return { ...totals };
}
