/**
 * Event worker (a piscina worker thread): loads every plugin, then runs one serve task for
 * its whole life. The serve loop claims ready events from the native queue in batches, runs
 * them one after another and completes the claim; when nothing is ready it spins briefly, then
 * sleeps until woken (`wake.ts`).
 *
 * An event whose handler awaits is parked: it keeps its tag busy (no later event of that tag
 * runs) but frees the worker, which goes on with other tags' events. When the handler's promise
 * settles the event finishes on its own.
 */
import { threadId, workerData } from 'node:worker_threads';
import {
  native, COMPLETE_STRIDE, CompleteField, CompleteFlag, CompleteResult, EventKind, PROGRESS_STRIDE, ProgressField,
  TAKE_STRIDE, TakeField,
} from '../native.ts';
import { createThreadContext, type ThreadContext } from '../thread-context.ts';
import { describeError } from '../errors.ts';
import { pluginFailure, pluginStack } from './failure.ts';
import { createLineLimiter, type LineLimiter } from '../log/rate-limit.ts';
import type { ArgValue } from '../config/manifest.ts';
import { decodePayload } from './codec.ts';
import { RunningEvent, nameOf, type HandlerEntry } from './runtime.ts';
import {
  beginSeeking, currentEpoch, endSeeking, parkedGeneration, readyGeneration, sleep, wakeSelf, workReady,
} from './wake.ts';
import type { NetworkFrame, ServeResult, ServeTask, WorkerEffects, WorkerInit } from './types.ts';

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
const TAKE_N = TAKE_STRIDE, COMPLETE_N = COMPLETE_STRIDE;
const core = native;
const Running = RunningEvent;
const nameOfId = nameOf, decodeUserPayload = decodePayload;
// The global `performance` is a lazy getter on Node 20: read it once.
const clock = performance;

/** Longest a worker sleeps without looking at the queue (a safety net; wake-ups are explicit). */
const MAX_SLEEP_MS = 1000;
/**
 * Longest a worker blocks its thread in one sleep when nothing of it awaits: then it lets its
 * event loop run once (plugin timers, messages) and sleeps again.
 */
const MAX_BLOCK_MS = 250;
/** Longest a worker spins for the next event before it sleeps, and how its spin adapts. */
const MAX_SPIN_MS = 0.2;

// No top-level await: piscina's loader cannot load an entry module that uses it under tsx.
const init = workerData as WorkerInit;
let thread!: ThreadContext;
let runtime!: ThreadContext['runtime'];
let flags!: ThreadContext['flags'];
let log!: ThreadContext['log'];
let effects: WorkerEffects | null = null;
let slot = -1;
/** The progress cells; this worker's start at `cell`. */
const progress = new Int32Array(native.slotProgressView());
let cell = -1;
const ready = createThreadContext(init.manifest, 'worker', init.pluginFiles).then((t) => {
  thread = t;
  ({ runtime, flags, log } = t);
  effects = runtime.effects;
  slot = native.slotRegister(threadId);
  cell = slot * PROGRESS_STRIDE;
  runtime.onRename = publishRename;
  failureLines = createLineLimiter({ perKeyPerSecond: 10, log });
  slowLines = createLineLimiter({ perKeyPerSecond: 10, log });
  process.on('unhandledRejection', (reason) => {
    log.error(`unhandled rejection in an event worker: ${describeError(reason)}`);
  });
});

let configVersion = -1;
/** slow_event_log_threshold_in_ms, re-read with the flags. */
let slowMs = Infinity;
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
/** Events of this worker that await now, by id. */
const awaitingEvents = new Map<number, RunningEvent>();
/** `parkedGeneration` when this worker last let go of its timed-out awaiting events. */
let seenParkedGeneration = 0;
/** Tags of the open claim held by an event that parked in it: their later events are skipped. */
const parkedTags = new Set<number>();
/** Set when an awaiting event finished: its effects are waiting to be flushed. */
let flushDue = false;
/** Resolves the wait of a serve loop that ends and waits for its awaiting events. */
let settled: (() => void) | null = null;
/**
 * Counts the serve loop's awaits. An awaiting event whose promise settled before the loop
 * awaited again (an async handler that awaited nothing, or something already settled) spent
 * no time waiting on I/O, only on its batch-mates: it is given no io-wait time.
 */
let loopTurn = 0;
/** Adaptive spin: an average of how long the worker waited for work when it went idle. */
let idleGapMs = MAX_SPIN_MS * 4;
const totals: ServeResult = { ran: 0, failed: 0, revoked: false };
/** `totals.ran` as last added to the `engine/events_run` counter (once per claim). */
let countedRan = 0;

function refreshFlags(): void {
  const version = core.configVersion();
  if (version === configVersion) return;
  configVersion = version;
  flags.load(JSON.parse(core.configGet()) as Record<string, ArgValue>);
  slowMs = flags.get<number>('slow_event_log_threshold_in_ms');
}

function ensureCapacity(maxBatch: number): void {
  if (meta.length < maxBatch * TAKE_STRIDE) {
    meta = new Float64Array(maxBatch * TAKE_STRIDE);
    timings = new Float64Array(maxBatch * COMPLETE_STRIDE);
  }
}

/** A renamed event's name goes where the watchdog reads it (the progress cell, or the parked record). */
function publishRename(ev: RunningEvent): void {
  if (ev.parked) core.renameParked(ev.id, ev.nameId);
  else if (runtime.running === ev) progress[cell + P_NAME] = ev.nameId;
}

/**
 * Per-event lines, at most 10 per event name and second each: one stalled second must not
 * write hundreds of identical lines (a summary line says how many were left out).
 */
let failureLines!: LineLimiter;
let slowLines!: LineLimiter;

/** Writes the failure and slow-event lines of a finished event. */
function report(ev: RunningEvent, entry: HandlerEntry, err: unknown, queueMs: number, handlerMs: number, ioMs: number,
  awaitedMs = 0): void {
  if (err !== undefined) {
    const failure = pluginFailure(entry.plugin, 'event', entry.event, err);
    failureLines.error(ev.name, `${failure.code}: ${failure.message}`,
      { event_name: ev.name, event_id: ev.id, event_tag: ev.tag, stack: pluginStack(failure) });
  }
  const executionMs = queueMs + handlerMs + ioMs;
  if (executionMs > slowMs) {
    slowLines.warn(ev.name, `Slow event: event_name=${ev.name}, event_id=${ev.id}, execution_time=${executionMs.toFixed(3)}`,
      awaitedMs > 0 ? { awaited_ms: Number(awaitedMs.toFixed(3)) } : undefined);
  }
}

/** Records a synchronous event's timings into the claim; its held children are queued. */
function finishSync(ev: RunningEvent, t: number, start: number, queueMs: number, entry: HandlerEntry, err: unknown): void {
  runtime.running = null;
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
  if (err !== undefined || queueMs + handlerMs + ev.ioWaitMs > slowMs) report(ev, entry, err, queueMs, handlerMs, ev.ioWaitMs);
}

/**
 * Parks event `i`, whose handler returned a pending promise (or whose object changes must be
 * committed), and finishes it when that settles: its commit, its sample, its tag, its effects.
 * Everything the event produces is held until then: the frames of its synchronous run are
 * taken back from the ring, and its children wait when it changed objects.
 */
function park(i: number, ev: RunningEvent, entry: HandlerEntry, pending: Promise<unknown>, start: number, queueMs: number): boolean {
  runtime.running = null;
  lastEnd = clock.now();
  const parkedAt = lastEnd;
  // Waits the handler did synchronously (sync engine calls) are io-wait already.
  const syncIoMs = ev.ioWaitMs;
  const handlerMs = Math.max(0, parkedAt - start - syncIoMs);
  if (!core.park(slot, i, ev.nameId)) return false;
  ev.parked = true;
  effects?.hold(ev);
  if (ev.heldInvokes !== null && ev.tx === undefined) runtime.releaseInvokes(ev);
  awaitingEvents.set(ev.id, ev);
  countAwaiting(1);
  parkedTags.add(ev.tag);
  const record = new Float64Array(COMPLETE_N);
  record[F_START] = timings[i * COMPLETE_N + F_START]!;
  const turn = loopTurn;
  const done = (err: unknown): void => {
    awaitingEvents.delete(ev.id);
    const awaitedMs = turn === loopTurn ? 0 : Math.max(0, clock.now() - parkedAt);
    const ioMs = syncIoMs + awaitedMs;
    record[F_HANDLER] = handlerMs;
    record[F_IO] = ioMs;
    record[F_NAME] = ev.nameId;
    if (err !== undefined) record[F_FLAGS] = FLAG_FAILED;
    const result = core.finishParked(ev.id, record, 0);
    if (result === R_REVOKED || err !== undefined && ev.heldInvokes !== null && ev.tx !== undefined) runtime.dropInvokes(ev);
    if (result === R_REVOKED) {
      // Timed out while it waited (the watchdog counted it out): what it did since is dropped.
      effects?.discard(ev);
      log.vlog(1, `event_name=${ev.name}, event_id=${ev.id} finished after its timeout; its effects were dropped`);
    } else {
      countAwaiting(-1);
      if (err === undefined || ev.tx === undefined) {
        effects?.release(ev);
        runtime.releaseInvokes(ev);
      } else {
        // Its object changes were not committed: nothing it did may be seen, but its failure is answered.
        effects?.discard(ev);
        if (ev.failureReply !== null) {
          ev.failureReply();
          effects?.release(ev);
        }
      }
      ev.tx = undefined;
      if (err !== undefined) {
        totals.failed++;
        core.counterIncrease('engine', 'events_failed', 1);
      }
      totals.ran++;
      countedRan++;
      core.counterIncrease('engine', 'events_run', 1);
      report(ev, entry, err, queueMs, handlerMs, ioMs, awaitedMs);
      if (result === R_MADE_READY) workReady();
    }
    flushDue = true;
    wakeSelf(slot);
    settled?.();
  };
  const objects = runtime.objects;
  const withObjects = objects === null ? pending
    : pending.then(() => (ev.tx === undefined ? undefined : objects.commit(ev, record, () => rerun(ev, entry))));
  withObjects.then(() => done(undefined), (err: unknown) => done(err ?? new Error('handler rejected with a nullish value')));
  return true;
}

/**
 * Runs the plugin's handler of `ev` again after an object conflict: what the first run held is
 * dropped, and the new run's synchronous part holds its children as the first did.
 */
function rerun(ev: RunningEvent, entry: HandlerEntry): unknown {
  effects?.discard(ev);
  runtime.dropInvokes(ev);
  runtime.running = ev;
  try {
    return ev.rerun !== null ? ev.rerun() : runtime.call(entry.async, ev, entry.fn, ev.payload, ev, undefined);
  } finally {
    runtime.running = null;
    if (ev.tx === undefined && ev.heldInvokes !== null) runtime.releaseInvokes(ev);
  }
}

/**
 * Counters `engine/events_awaiting` (now, all event threads) and `engine/events_awaiting_peak`.
 * Several workers may raise the peak at once; each retries until the stored peak is at least
 * what it saw.
 */
function countAwaiting(delta: number): void {
  const now = core.counterIncrease('engine', 'events_awaiting', delta);
  if (delta <= 0) return;
  for (let peak = core.counterValue('engine', 'events_awaiting_peak') ?? 0; now > peak;
    peak = core.counterValue('engine', 'events_awaiting_peak') ?? 0) {
    core.counterUpdate('engine', 'events_awaiting_peak', now, false);
  }
}

/**
 * Runs claimed event `i` from `start`: returns 0 when it finished, 1 when it parked, -1 when the
 * slot was revoked meanwhile.
 */
function runOne(i: number, queueMs: number, start: number): number {
  const m = i * TAKE_N;
  const t = i * COMPLETE_N;
  const nameId = meta[m + T_NAME]!;
  timings[t + F_NAME] = nameId;
  const handlerId = meta[m + T_HANDLER]!;
  let entry = lastEntry;
  if (handlerId !== lastHandlerId) {
    entry = runtime.handlersById.get(handlerId);
    // Only found handlers are remembered: one registered later must be found then.
    if (entry !== undefined) {
      lastEntry = entry;
      lastHandlerId = handlerId;
    }
  }
  if (nameId !== lastNameId) {
    lastName = nameOfId(nameId);
    lastNameId = nameId;
  }
  const kind = meta[m + T_KIND]!;
  const ev = new Running(runtime, meta[m + T_ID]!, meta[m + T_TAG]!, kind, meta[m + T_SESSION]!, lastName, nameId);
  if (!entry) {
    // Its handler is gone (a plugin reload removed it after the event was queued): dropped,
    // counted, and logged at most 10 times per second per event name.
    core.counterIncrease('engine', 'events_unknown_handler', 1);
    failureLines.error(ev.name, `GSF_ERR_UNKNOWN_EVENT: event_name=${ev.name}, event_id=${ev.id}, event_tag=${ev.tag}: `
      + `no handler '${nameOfId(handlerId)}' on this event thread; the event is dropped`);
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
  } else {
    payload = length === 0 ? undefined : decodeUserPayload(bytes, offset, length);
  }
  runtime.running = ev;
  ev.payload = payload;
  let result: unknown;
  try {
    result = entry.async ? runtime.call(true, ev, entry.fn, payload, ev, undefined) : entry.fn(payload, ev);
  } catch (err) {
    if (ev.tx !== undefined) runtime.objects?.discard(ev);
    finishSync(ev, t, start, queueMs, entry, err ?? new Error('handler threw a nullish value'));
    return 0;
  }
  if (result instanceof Promise) return park(i, ev, entry, result, start, queueMs) ? 1 : -1;
  // A synchronous handler that changed objects waits for their commit like an awaiting one.
  if (ev.tx !== undefined) return park(i, ev, entry, Promise.resolve(), start, queueMs) ? 1 : -1;
  finishSync(ev, t, start, queueMs, entry, undefined);
  return 0;
}

/** Runs a claim of `n` events; false if the slot was revoked (an event of it timed out). */
function runClaim(n: number): boolean {
  timings.fill(0, 0, n * COMPLETE_N);
  frame.claim++;
  frame.claimEnd = meta[(n - 1) * TAKE_N + T_OFFSET]! + meta[(n - 1) * TAKE_N + T_LENGTH]!;
  parkedTags.clear();
  const claimStart = clock.now();
  lastEnd = claimStart;
  let started = -1;
  for (let i = 0; i < n; i++) {
    // The later events of a parked event's tag wait for it: the queue takes them back.
    if (parkedTags.size > 0 && parkedTags.has(meta[i * TAKE_N + T_TAG]!)) continue;
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
    const outcome = runOne(i, meta[i * TAKE_N + T_AGE]! + startMs, lastEnd);
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

/** Lets go of this worker's awaiting events that timed out (their promises may never settle). */
function letGoOfTimedOut(): void {
  const generation = parkedGeneration(slot);
  if (generation === seenParkedGeneration) return;
  seenParkedGeneration = generation;
  const still = new Set(core.parkedOf(slot));
  for (const [id, ev] of awaitingEvents) {
    if (still.has(id)) continue;
    awaitingEvents.delete(id);
    effects?.discard(ev);
  }
}

function flushEffects(): void {
  flushDue = false;
  effects?.flush();
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Waits for work: spins while that has recently paid (events came within the spin time),
 * then sleeps. Returns early when an awaiting event of this worker finished.
 */
async function waitForWork(seen: number): Promise<void> {
  const idleStart = clock.now();
  // Spin only while work has recently come back within the spin time (spinning pays); never
  // while events of this worker await (spinning blocks the thread's event loop).
  const spinMs = awaitingEvents.size > 0 || idleGapMs > MAX_SPIN_MS ? 0 : MAX_SPIN_MS;
  if (spinMs > 0) {
    beginSeeking();
    try {
      const until = idleStart + spinMs;
      for (let k = 0; ; k++) {
        if (readyGeneration() !== seen) {
          idleGapMs = 0.75 * idleGapMs + 0.25 * (clock.now() - idleStart);
          return;
        }
        if ((k & 63) === 63 && clock.now() >= until) break;
      }
    } finally {
      endSeeking();
    }
  }
  const keepLoop = awaitingEvents.size > 0 || flushDue;
  await sleep(slot, seen, keepLoop ? MAX_SLEEP_MS : MAX_BLOCK_MS, keepLoop);
  if (!keepLoop && readyGeneration() === seen) await yieldToLoop();
  idleGapMs = 0.75 * idleGapMs + 0.25 * Math.min(clock.now() - idleStart, 100);
}

/** The piscina task: serve events until the epoch ends. */
export default async function serve(task: ServeTask): Promise<ServeResult> {
  if (slot < 0) await ready;
  if (task.warmup) return { ran: 0, failed: 0, revoked: false };
  try {
    return await serveLoop(task);
  } catch (err) {
    // A fault of the loop itself (never a handler's: those are caught per event) leaves a claim
    // half done: ending this thread hands its unstarted events back to the queue, and what its
    // finished events produced is still delivered (see WorkerEndHooks).
    log.error(`GSF_ERR_INTERNAL: event worker ${threadId} failed and is replaced: ${describeError(err)}`,
      { stack: err instanceof Error ? err.stack : undefined });
    process.exit(1);
  }
}

async function serveLoop(task: ServeTask): Promise<ServeResult> {
  ensureCapacity(task.maxBatch);
  core.slotAttachTask(slot, task.taskId);
  totals.ran = 0;
  totals.failed = 0;
  countedRan = 0;
  let lastYield = clock.now();
  while (currentEpoch() === task.epoch) {
    refreshFlags();
    letGoOfTimedOut();
    const seen = readyGeneration();
    // Each claimed event may await: claim no more than the cap leaves room for.
    const room = task.maxAwaiting - awaitingEvents.size;
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
      if (awaitingEvents.size > 0 || now - lastYield >= task.budgetMs) {
        await yieldToLoop();
        loopTurn++;
        lastYield = clock.now();
      }
      continue;
    }
    if (flushDue) flushEffects();
    await waitForWork(seen);
    loopTurn++;
    lastYield = clock.now();
    if (flushDue) flushEffects();
  }
  // The epoch ended (pool replaced, server stopping): finish what awaits, then leave. Not
  // through the shared sleep cells: this worker must not take wake-ups meant for serving ones.
  while (awaitingEvents.size > 0 && currentEpoch() !== -1) {
    await new Promise<void>((resolve) => {
      settled = resolve;
      setTimeout(resolve, 50);
    });
    settled = null;
    letGoOfTimedOut();
    if (flushDue) flushEffects();
  }
  flushEffects();
  return { ...totals };
}

/** This worker's thread context (tests of worker internals). */
export function workerThread(): ThreadContext {
  return thread;
}
