/**
 * Event worker (a piscina worker): loads every plugin, then runs drain tasks. A drain task
 * claims ready events from the native queue in batches, runs them one after another and
 * completes the batch, until the queue has nothing ready or the task's time budget ends.
 */
import { threadId, workerData } from 'node:worker_threads';
import {
  native, COMPLETE_STRIDE, CompleteField, CompleteFlag, EventKind, PROGRESS_STRIDE, TAKE_STRIDE, TakeField,
} from '../native.ts';

// Local copies: module exports are live bindings (getters), too slow to read per event.
const T_ID = TakeField.id, T_TAG = TakeField.tag, T_NAME = TakeField.nameId, T_HANDLER = TakeField.handlerId;
const T_SESSION = TakeField.sessionId, T_KIND = TakeField.kind, T_OFFSET = TakeField.payloadOffset;
const T_LENGTH = TakeField.payloadLength, T_AGE = TakeField.queueAgeMs;
const F_HANDLER = CompleteField.handlerMs, F_IO = CompleteField.ioWaitMs, F_NAME = CompleteField.nameId;
const F_FLAGS = CompleteField.flags, F_START = CompleteField.startMs;
const FLAG_FAILED = CompleteFlag.failed, FLAG_NOT_RUN = CompleteFlag.notRun;
const K_NETWORK = EventKind.network;
const TAKE_N = TAKE_STRIDE, COMPLETE_N = COMPLETE_STRIDE;
import { createHost, type ThreadHost } from '../host.ts';
import { describeError } from '../errors.ts';
import type { ArgValue } from '../config/manifest.ts';
import { decodePayload } from './codec.ts';
import { flushOutbound, lingerForNetwork, networkMark } from '../session/outbound.ts';
import { RunningEvent, nameOf, type HandlerEntry } from './runtime.ts';
import { runWithObjects } from '../objects/event-commit.ts';
import type { DrainResult, DrainTask, NetworkFrame, WorkerInit } from './types.ts';

// The same for the functions called per event or per batch.
const core = native;
const Running = RunningEvent;
const nameOfId = nameOf, decodeUserPayload = decodePayload;
const flushOut = flushOutbound, lingerForPush = lingerForNetwork, pushMark = networkMark;
// The global `performance` is a lazy getter on Node 20: read it once.
const clock = performance;

// No top-level await: piscina's loader cannot load an entry module that uses it under tsx.
const init = workerData as WorkerInit;
let runtime!: ThreadHost['runtime'];
let flags!: ThreadHost['flags'];
let log!: ThreadHost['log'];
let slot = -1;
/** The progress cells; this worker's are at `cell` (index) and `cell + 1` (start in µs). */
const progress = new Int32Array(native.slotProgressView());
let cell = -1;
const ready = createHost(init.manifest, 'worker', init.pluginFiles).then((h) => {
  ({ runtime, flags, log } = h);
  slot = native.slotRegister(threadId);
  cell = slot * PROGRESS_STRIDE;
  process.on('unhandledRejection', (reason) => {
    log.error(`unhandled rejection in an event worker: ${describeError(reason)}`);
  });
});

let configVersion = -1;
/** slow_event_log_threshold_in_ms, re-read with the flags before each task. */
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

function refreshFlags(): void {
  const version = native.configVersion();
  if (version === configVersion) return;
  configVersion = version;
  flags.load(JSON.parse(native.configGet()) as Record<string, ArgValue>);
  slowMs = flags.get<number>('slow_event_log_threshold_in_ms');
}

function ensureCapacity(maxBatch: number): void {
  if (meta.length < maxBatch * TAKE_STRIDE) {
    meta = new Float64Array(maxBatch * TAKE_STRIDE);
    timings = new Float64Array(maxBatch * COMPLETE_STRIDE);
  }
}

/**
 * When the last event finished (`clock.now()`): a synchronous event's end is the next
 * one's start, which spares a clock read per event.
 */
let lastEnd = 0;

/** Records an event's timings into the batch and writes the slow-event and failure lines. */
function finishEvent(ev: RunningEvent, t: number, start: number, queueMs: number, entry: HandlerEntry, err: unknown): void {
  runtime.running = null;
  lastEnd = clock.now();
  const handlerMs = Math.max(0, lastEnd - start - ev.ioWaitMs);
  timings[t + F_HANDLER] = handlerMs;
  timings[t + F_IO] = ev.ioWaitMs;
  timings[t + F_NAME] = ev.nameId;
  if (err !== undefined) {
    timings[t + F_FLAGS] = FLAG_FAILED;
    const cause = err instanceof Error && err.stack ? err.stack : describeError(err);
    log.error(`GSF_ERR_HANDLER_FAILED: plugin '${entry.plugin}' event '${entry.event}' failed: ${describeError(err)}`,
      { event_name: ev.name, event_id: ev.id, event_tag: ev.tag, cause });
  }
  const executionMs = queueMs + handlerMs + ev.ioWaitMs;
  if (executionMs > slowMs) {
    log.warn(`Slow event: event_name=${ev.name}, event_id=${ev.id}, execution_time=${executionMs.toFixed(3)}ms`);
  }
}

/** Runs claimed event `i` from `start`; returns a promise only when the handler is asynchronous. */
function runOne(i: number, queueMs: number, start: number): Promise<void> | undefined {
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
    log.error(`GSF_ERR_UNKNOWN_EVENT: event_name=${ev.name}, event_id=${ev.id}: no handler on this worker`);
    timings[t + F_FLAGS] = FLAG_NOT_RUN;
    return undefined;
  }
  const length = meta[m + T_LENGTH]!;
  const offset = meta[m + T_OFFSET]!;
  // Network events carry the client's raw frame; their handler decodes it before returning.
  let payload: unknown;
  if (kind === K_NETWORK) {
    frame.start = offset;
    frame.end = offset + length;
    payload = frame;
  } else {
    payload = length === 0 ? undefined : decodeUserPayload(bytes, offset, length);
  }
  runtime.running = ev;
  let result: unknown;
  try {
    // The handler, then its object changes' commit (and reruns on conflict).
    result = runWithObjects(entry.fn, payload, ev, timings, t);
  } catch (err) {
    finishEvent(ev, t, start, queueMs, entry, err ?? new Error('handler threw a nullish value'));
    return undefined;
  }
  if (result instanceof Promise) {
    return result.then(
      () => finishEvent(ev, t, start, queueMs, entry, undefined),
      (err: unknown) => finishEvent(ev, t, start, queueMs, entry, err ?? new Error('handler rejected with a nullish value')),
    );
  }
  finishEvent(ev, t, start, queueMs, entry, undefined);
  return undefined;
}

/** The piscina task: drain ready events until none is ready or the budget ends. */
export default async function drain(task: DrainTask): Promise<DrainResult> {
  if (slot < 0) await ready;
  if (task.warmup) return { ran: 0, failed: 0, revoked: false };
  refreshFlags();
  ensureCapacity(task.maxBatch);
  core.slotAttachTask(slot, task.taskId);
  const deadline = clock.now() + task.budgetMs;
  const result: DrainResult = { ran: 0, failed: 0, revoked: false };
  for (;;) {
    const batch = Math.max(1, Math.min(task.maxBatch, Math.floor(BATCH_TARGET_MS / perEventMs)));
    const mark = pushMark();
    let n = core.take(slot, meta, bytes, batch);
    if (n < -1) {
      bytes = new Uint8Array(Math.max(-n, bytes.length * 2));
      frame.bytes = bytes;
      n = core.take(slot, meta, bytes, batch);
    }
    if (n === -1) {
      result.revoked = true;
      break;
    }
    if (n <= 0) {
      // With sessions on, wait briefly for the next client message rather than end the task.
      if (lingerForPush(mark, deadline - clock.now())) continue;
      break;
    }
    timings.fill(0, 0, n * COMPLETE_N);
    frame.claim++;
    frame.claimEnd = meta[(n - 1) * TAKE_N + T_OFFSET]! + meta[(n - 1) * TAKE_N + T_LENGTH]!;
    const batchStart = clock.now();
    lastEnd = batchStart;
    for (let i = 0; i < n; i++) {
      // Start event i in the progress cells (no native call): the start, then the swap that a
      // timeout of this slot makes fail. The swap publishes the plain write before it.
      const startMs = lastEnd - batchStart;
      progress[cell + 1] = Math.min(startMs * 1000, 0x7fffffff);
      if (Atomics.compareExchange(progress, cell, i - 1, i) !== i - 1) {
        flushOut();
        result.revoked = true;
        return result;
      }
      timings[i * COMPLETE_N + F_START] = startMs;
      const pending = runOne(i, meta[i * TAKE_N + T_AGE]! + startMs, lastEnd);
      if (pending) {
        await pending;
        lastEnd = clock.now(); // other work may have run while the handler waited
      }
      if (timings[i * COMPLETE_N + F_FLAGS] === FLAG_FAILED) result.failed++;
    }
    // Session frames leave before the batch completes: the next event of a tag may run elsewhere.
    flushOut();
    if (!core.complete(slot, n, timings)) {
      result.revoked = true;
      break;
    }
    result.ran += n;
    const now = clock.now();
    perEventMs = 0.5 * perEventMs + 0.5 * Math.max(0.0001, (now - batchStart) / n);
    if (now >= deadline) break;
  }
  return result;
}
