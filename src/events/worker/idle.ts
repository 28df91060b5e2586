/**
 * How an event worker with nothing to do waits for work: it spins briefly while that pays
 * (work has been coming back within the spin time), then sleeps on its own shared cell
 * (`wake.ts`). With nothing of its own awaiting, the sleep blocks the thread (a plain futex
 * wake-up, the cheapest there is); with awaiting events it keeps the event loop running.
 */
import { beginSeeking, endSeeking, readyGeneration, sleep } from '../wake.ts';

/** Longest a worker sleeps without looking at the queue (a safety net; wake-ups are explicit). */
const MAX_SLEEP_MS = 1000;
/**
 * Longest a worker blocks its thread in one sleep when nothing of it awaits: then it lets its
 * event loop run once (plugin timers, messages) and sleeps again.
 */
const MAX_BLOCK_MS = 250;
/** Longest a worker spins for the next event before it sleeps. */
const MAX_SPIN_MS = 0.2;

// The global `performance` is a lazy getter on Node 20: read it once.
const clock = performance;

/** Lets the thread's event loop run once (awaiting events resume, messages arrive). */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class IdleWaiter {
  /** An average of how long the worker waited for work when it went idle. */
  private gapMs = MAX_SPIN_MS * 4;

  constructor(private readonly slot: number) {}

  /**
   * Waits until events may be ready (the ready generation moved past `seen`), a wake-up, or the
   * sleep's limit. `keepLoop`: events of this worker await (or frames wait to be flushed), so
   * the thread's event loop must run meanwhile.
   */
  async wait(seen: number, keepLoop: boolean): Promise<void> {
    const start = clock.now();
    // Spin only while work has recently come back within the spin time; never while the event
    // loop must run (spinning blocks it).
    if (!keepLoop && this.gapMs <= MAX_SPIN_MS) {
      beginSeeking();
      try {
        const until = start + MAX_SPIN_MS;
        for (let k = 0; ; k++) {
          if (readyGeneration() !== seen) {
            this.gapMs = 0.75 * this.gapMs + 0.25 * (clock.now() - start);
            return;
          }
          if ((k & 63) === 63 && clock.now() >= until) break;
        }
      } finally {
        endSeeking();
      }
    }
    await sleep(this.slot, seen, keepLoop ? MAX_SLEEP_MS : MAX_BLOCK_MS, keepLoop);
    if (!keepLoop && readyGeneration() === seen) await yieldToLoop();
    this.gapMs = 0.75 * this.gapMs + 0.25 * Math.min(clock.now() - start, 100);
  }
}
