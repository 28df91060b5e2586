/**
 * Wake-ups between threads, in one SharedArrayBuffer every thread of the process shares.
 *
 * Event workers run a serve loop (`worker/serve.ts`); a worker with nothing to do may spin briefly on
 * its own cell (seeking), then sleeps on it. Whoever makes events ready (the main thread's push
 * stage and timers, a worker that invoked events or completed a claim) calls `workReady()`,
 * which hands the work to one idle worker: a seeking one (its cell changes, no system call), or
 * else one sleeping one (a futex wake-up). Pushes never touch a cell every worker watches, and
 * wake at most one worker each; while no worker is idle they cost one atomic read.
 *
 * The native queue issues a full fence after each change that makes events ready, and before it
 * reports whether any are ready: a worker announces itself idle in its cell, then asks the queue
 * (`workWaiting`), so a producer either sees the worker idle or the worker sees its events.
 */
import { getEnvironmentData, isMainThread, setEnvironmentData } from 'node:worker_threads';

const KEY = 'gsf.events.wake-cells';
const MAX_WORKERS = 256;

/** Cell indices. */
const IDLE = 0; // workers seeking or asleep waiting for work: workReady does nothing while it is 0
const SLEEPERS = 1; // workers asleep or about to sleep
const SEEKERS = 2; // workers spinning on their cell now
const EPOCH = 3; // serve loops of an older epoch stop (pool replaced, server stopping)
const SLOTS_SEEN = 4; // one past the highest slot that ever went idle: wake-ups scan no further
/** First counter cell free for other features (`counterCell`). */
const FEATURE_BASE = 8;
const FEATURE_CELLS = 8;
const WORKER_BASE = FEATURE_BASE + FEATURE_CELLS; // + slot: that worker's state (below)
const PARKED_BASE = WORKER_BASE + MAX_WORKERS; // + slot: bumped when an event that slot parked timed out
const CELLS = PARKED_BASE + MAX_WORKERS;

/** A worker's cell. */
const BUSY = 0; // running, or handed work (by a waker, who set it back to this)
const ASLEEP = 1; // asleep, waiting for work
const SEEKING = 2; // spinning on its cell, waiting for work
const ASLEEP_OWN = 3; // asleep for its own awaiting events only (takes no work now)

// Created once on the main thread before any worker exists (this module is imported with the
// event system), so every worker inherits the same cells.
if (isMainThread && getEnvironmentData(KEY) === undefined) {
  setEnvironmentData(KEY, new SharedArrayBuffer(CELLS * 4) as unknown as string);
}
const cells = new Int32Array((getEnvironmentData(KEY) as unknown as SharedArrayBuffer | undefined) ?? new SharedArrayBuffer(CELLS * 4));

/**
 * Events became ready: hands them to one idle worker, a seeking one first. Safe on any thread;
 * costs one atomic read when no worker is idle.
 */
export function workReady(): void {
  if (Atomics.load(cells, IDLE) === 0) return;
  wakeOne();
}

/** Hands work to one idle worker, if any (seeking before sleeping); true if one was found. */
export function wakeOne(): boolean {
  const end = WORKER_BASE + Atomics.load(cells, SLOTS_SEEN);
  for (let i = WORKER_BASE; i < end; i++) {
    if (Atomics.load(cells, i) === SEEKING && Atomics.compareExchange(cells, i, SEEKING, BUSY) === SEEKING) return true;
  }
  for (let i = WORKER_BASE; i < end; i++) {
    if (Atomics.load(cells, i) === ASLEEP && Atomics.compareExchange(cells, i, ASLEEP, BUSY) === ASLEEP) {
      Atomics.notify(cells, i, 1);
      return true;
    }
  }
  return false;
}

/** Wakes every idle worker (a new epoch: they check whether to stop). */
export function wakeAll(): void {
  const end = WORKER_BASE + Atomics.load(cells, SLOTS_SEEN);
  for (let i = WORKER_BASE; i < end; i++) {
    const state = Atomics.load(cells, i);
    if (state !== BUSY && Atomics.compareExchange(cells, i, state, BUSY) === state) Atomics.notify(cells, i, 1);
  }
}

/** Raised before a worker announces itself idle: a waker that sees it scans far enough. */
function markSeen(slot: number): void {
  for (let high = Atomics.load(cells, SLOTS_SEEN); high <= slot; high = Atomics.load(cells, SLOTS_SEEN)) {
    Atomics.compareExchange(cells, SLOTS_SEEN, high, slot + 1);
  }
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

/**
 * Worker: spins on its own cell for up to `maxMs` while no more than `maxSeekers` workers spin,
 * until a waker hands it work; true if it was handed work or `workWaiting` already found some,
 * false if it spun out or too many spin (then it should sleep).
 */
export function seek(slot: number, maxMs: number, maxSeekers: number, workWaiting: () => boolean): boolean {
  if (Atomics.add(cells, SEEKERS, 1) >= maxSeekers) {
    Atomics.sub(cells, SEEKERS, 1);
    return false;
  }
  const cell = WORKER_BASE + slot;
  markSeen(slot);
  Atomics.store(cells, cell, SEEKING);
  Atomics.add(cells, IDLE, 1);
  try {
    // Asked after announcing: a producer either saw us seeking or we see its work.
    if (workWaiting()) return true;
    const until = performance.now() + maxMs;
    for (let k = 0; ; k++) {
      if (Atomics.load(cells, cell) !== SEEKING) return true;
      if ((k & 63) === 63 && performance.now() >= until) return false;
    }
  } finally {
    Atomics.store(cells, cell, BUSY);
    Atomics.sub(cells, IDLE, 1);
    Atomics.sub(cells, SEEKERS, 1);
  }
}

/**
 * Worker: sleeps on its own cell until woken or `maxMs` passes. With `workWaiting`, it waits for
 * work too (a producer's `workReady` may wake it), and returns at once if that finds work after
 * the sleep was announced; without, only `wakeSelf`, `parkedEventGone` and `wakeAll` wake it
 * (its own awaiting events fill its room).
 *
 * With `keepLoop` (events of this worker await), the sleep keeps the thread's event loop
 * running so they can resume. Without it the thread blocks on the cell: a wake-up is then a
 * plain futex wake, several times cheaper on both sides than waking an event loop, which is
 * what a lightly loaded server does for every message.
 */
export async function sleep(slot: number, maxMs: number, keepLoop: boolean, workWaiting?: () => boolean): Promise<void> {
  const cell = WORKER_BASE + slot;
  const forWork = workWaiting !== undefined;
  const state = forWork ? ASLEEP : ASLEEP_OWN;
  markSeen(slot);
  Atomics.store(cells, cell, state);
  Atomics.add(cells, SLEEPERS, 1);
  if (forWork) Atomics.add(cells, IDLE, 1);
  try {
    // Asked after announcing the sleep: a producer either saw us sleeping or we see its work.
    if (forWork && workWaiting()) return;
    if (!keepLoop) {
      Atomics.wait(cells, cell, state, maxMs);
      return;
    }
    const wait = Atomics.waitAsync(cells, cell, state, maxMs);
    if (wait.async) await wait.value;
  } finally {
    Atomics.store(cells, cell, BUSY);
    Atomics.sub(cells, SLEEPERS, 1);
    if (forWork) Atomics.sub(cells, IDLE, 1);
  }
}

/** Ends a sleep of `slot`, for work or not. */
function wakeSlot(slot: number): void {
  const cell = WORKER_BASE + slot;
  for (const state of [ASLEEP, ASLEEP_OWN]) {
    if (Atomics.compareExchange(cells, cell, state, BUSY) === state) {
      Atomics.notify(cells, cell, 1);
      return;
    }
  }
}

/** Worker: ends its own sleep (an awaiting event finished on this thread). */
export function wakeSelf(slot: number): void {
  wakeSlot(slot);
}

/** Main thread: an event `slot` parked was timed out; the worker lets it go (and wakes to see it). */
export function parkedEventGone(slot: number): void {
  Atomics.add(cells, PARKED_BASE + slot, 1);
  wakeSlot(slot);
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
 * Answers this process waits for that will be queued as events when they come (an
 * authentication callback's request): the queue is not idle while any is on its way, so a
 * stop's drain waits for them too. Reset when a server starts (those of an earlier server of the
 * process ended with its threads).
 */
const AWAITED = 7;
export function awaitedAnswers(delta = 0): number {
  return delta === 0 ? Atomics.load(cells, FEATURE_BASE + AWAITED) : Atomics.add(cells, FEATURE_BASE + AWAITED, delta) + delta;
}
export function resetAwaitedAnswers(): void {
  Atomics.store(cells, FEATURE_BASE + AWAITED, 0);
}

/**
 * A process-wide counter cell for a feature built on the event system (its own slot in the
 * shared cells, so every thread sees it). `index` is 0 to 6, one per feature (7 is `awaitedAnswers`').
 */
export function featureCell(index: number): { cells: Int32Array; index: number } {
  if (!Number.isInteger(index) || index < 0 || index >= AWAITED) throw new RangeError(`feature cell ${index} out of range`);
  return { cells, index: FEATURE_BASE + index };
}
