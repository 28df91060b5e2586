/**
 * Wake-ups between threads, in one SharedArrayBuffer every thread of the process shares.
 *
 * Event workers run a serve loop (`worker.ts`); a worker with nothing to do spins briefly,
 * then sleeps on its own cell. Whoever makes events ready (the main thread's push stage and
 * timers, a worker that invoked events or completed a claim) calls `workReady()`, which wakes
 * one sleeping worker, and only when no worker is awake and looking for work: at low rates one
 * wake-up per turn of the main thread, at high rates none (the workers never sleep).
 */
import { getEnvironmentData, isMainThread, setEnvironmentData } from 'node:worker_threads';

const KEY = 'gsf.events.wake-cells';
const MAX_WORKERS = 256;

/** Cell indices. */
const GENERATION = 0; // bumped each time events became ready
const SLEEPERS = 1; // workers asleep or about to sleep
const SEEKERS = 2; // workers awake and looking for work (spinning)
const EPOCH = 3; // serve loops of an older epoch stop (pool replaced, server stopping)
const SLOTS_SEEN = 4; // one past the highest slot that ever slept: wake-ups scan no further
/** First counter cell free for other features (`counterCell`). */
const FEATURE_BASE = 8;
const FEATURE_CELLS = 8;
const WORKER_BASE = FEATURE_BASE + FEATURE_CELLS; // + slot: 1 while that worker sleeps
const PARKED_BASE = WORKER_BASE + MAX_WORKERS; // + slot: bumped when an event that slot parked timed out
const CELLS = PARKED_BASE + MAX_WORKERS;

// Created once on the main thread before any worker exists (this module is imported with the
// event system), so every worker inherits the same cells.
if (isMainThread && getEnvironmentData(KEY) === undefined) {
  setEnvironmentData(KEY, new SharedArrayBuffer(CELLS * 4) as unknown as string);
}
const cells = new Int32Array((getEnvironmentData(KEY) as unknown as SharedArrayBuffer | undefined) ?? new SharedArrayBuffer(CELLS * 4));

/**
 * Events became ready: wakes one sleeping worker unless one is awake and looking (it will
 * find them). Safe on any thread; costs two atomic reads when nobody sleeps.
 */
export function workReady(): void {
  Atomics.add(cells, GENERATION, 1);
  if (Atomics.load(cells, SEEKERS) > 0 || Atomics.load(cells, SLEEPERS) === 0) return;
  wakeOne();
}

/** Wakes one sleeping worker, if any; true if one was woken. */
export function wakeOne(): boolean {
  const end = WORKER_BASE + Atomics.load(cells, SLOTS_SEEN);
  for (let i = WORKER_BASE; i < end; i++) {
    if (Atomics.load(cells, i) === 1 && Atomics.compareExchange(cells, i, 1, 0) === 1) {
      Atomics.notify(cells, i, 1);
      return true;
    }
  }
  return false;
}

/** Wakes every sleeping worker (a new epoch: they check whether to stop). */
export function wakeAll(): void {
  const end = WORKER_BASE + Atomics.load(cells, SLOTS_SEEN);
  for (let i = WORKER_BASE; i < end; i++) {
    if (Atomics.load(cells, i) === 1 && Atomics.compareExchange(cells, i, 1, 0) === 1) Atomics.notify(cells, i, 1);
  }
}

/** The ready generation: a worker compares it before and after looking at the queue. */
export function readyGeneration(): number {
  return Atomics.load(cells, GENERATION);
}

/** Main thread: starts a new serve epoch (older serve loops end) and returns it. */
export function nextEpoch(): number {
  const epoch = Atomics.add(cells, EPOCH, 1) + 1;
  wakeAll();
  return epoch;
}

/** The current serve epoch. */
export function currentEpoch(): number {
  return Atomics.load(cells, EPOCH);
}

/** Main thread: ends every serve loop (the server stops). */
export function stopAllEpochs(): void {
  Atomics.store(cells, EPOCH, -1);
  wakeAll();
}

/** Worker: counts itself as awake and looking for work (workReady wakes nobody meanwhile). */
export function beginSeeking(): void {
  Atomics.add(cells, SEEKERS, 1);
}

/** Worker: no longer looking (found work, or about to sleep). */
export function endSeeking(): void {
  Atomics.sub(cells, SEEKERS, 1);
}

/**
 * Worker: sleeps until woken or `maxMs` passes, unless the generation moved past `seen`
 * (events became ready meanwhile). The caller must not be seeking.
 *
 * With `keepLoop` (events of this worker await), the sleep keeps the thread's event loop
 * running so they can resume. Without it the thread blocks on the cell: a wake-up is then a
 * plain futex wake, several times cheaper on both sides than waking an event loop, which is
 * what a lightly loaded server does for every message.
 */
export async function sleep(slot: number, seen: number, maxMs: number, keepLoop: boolean): Promise<void> {
  const cell = WORKER_BASE + slot;
  // Raised before the sleep is announced: a waker that sees us sleeping scans far enough.
  for (let high = Atomics.load(cells, SLOTS_SEEN); high <= slot; high = Atomics.load(cells, SLOTS_SEEN)) {
    Atomics.compareExchange(cells, SLOTS_SEEN, high, slot + 1);
  }
  Atomics.store(cells, cell, 1);
  Atomics.add(cells, SLEEPERS, 1);
  try {
    // Checked after announcing the sleep: a producer either saw us sleeping or we see its work.
    if (Atomics.load(cells, GENERATION) !== seen) return;
    if (!keepLoop) {
      Atomics.wait(cells, cell, 1, maxMs);
      return;
    }
    const wait = Atomics.waitAsync(cells, cell, 1, maxMs);
    if (wait.async) await wait.value;
  } finally {
    Atomics.store(cells, cell, 0);
    Atomics.sub(cells, SLEEPERS, 1);
  }
}

/** Worker: ends its own sleep (an awaiting event finished on this thread). */
export function wakeSelf(slot: number): void {
  const cell = WORKER_BASE + slot;
  if (Atomics.compareExchange(cells, cell, 1, 0) === 1) Atomics.notify(cells, cell, 1);
}

/** Main thread: an event `slot` parked was timed out; the worker lets it go (and wakes to see it). */
export function parkedEventGone(slot: number): void {
  Atomics.add(cells, PARKED_BASE + slot, 1);
  const cell = WORKER_BASE + slot;
  if (Atomics.compareExchange(cells, cell, 1, 0) === 1) Atomics.notify(cells, cell, 1);
}

/** Worker: changes whenever an event this slot parked was timed out. */
export function parkedGeneration(slot: number): number {
  return Atomics.load(cells, PARKED_BASE + slot);
}

/** Sleeping workers now (tests and diagnostics). */
export function sleepingWorkers(): number {
  return Atomics.load(cells, SLEEPERS);
}

/**
 * A process-wide counter cell for a feature built on the event system (its own slot in the
 * shared cells, so every thread sees it). `index` is 0 to 7, one per feature.
 */
export function featureCell(index: number): { cells: Int32Array; index: number } {
  if (!Number.isInteger(index) || index < 0 || index >= FEATURE_CELLS) throw new RangeError(`feature cell ${index} out of range`);
  return { cells, index: FEATURE_BASE + index };
}
