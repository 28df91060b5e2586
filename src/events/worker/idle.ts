/**
 * How an event worker with nothing to do waits for work: it spins on its own shared cell while
 * that pays (work has been coming back within the spin time) and few other workers spin, then
 * sleeps on that cell (`wake.ts`). A producer hands work to one such worker by changing its
 * cell. With nothing of its own awaiting, the sleep blocks the thread (a plain futex wake-up,
 * the cheapest there is); with awaiting events it keeps the event loop running.
 */
import os from 'node:os';
import { native } from '../../native.ts';
import { seek, sleep } from '../wake.ts';

/** Longest a worker sleeps without looking at the queue (a safety net; wake-ups are explicit). */
const MAX_SLEEP_MS = 1000;
/**
 * Longest a worker blocks its thread in one sleep when nothing of it awaits: then it lets its
 * event loop run once (plugin timers, messages) and sleeps again.
 */
const MAX_BLOCK_MS = 250;
/** Longest a worker spins for the next event before it sleeps. */
const MAX_SPIN_MS = 0.2;
/**
 * Workers spinning at once: fewer than the cores, so that spinning ones never take a core from
 * the threads that produce and run events (more event threads than cores is common), and at
 * most four. A push hands its work to one idle worker, so a few spinners keep most hand-overs
 * free of system calls; on a many-core machine more of them only take cores and cache lines
 * from the threads that push (the main thread, the session I/O threads).
 */
const MAX_SEEKERS = Math.max(1, Math.min(os.availableParallelism() - 1, 4));

// The global `performance` is a lazy getter on Node 20: read it once.
const clock = performance;
const core = native;
/** Whether some tag could be claimed now (fenced: see wake.ts). */
const workWaiting = (): boolean => core.ready() > 0;

/** Lets the thread's event loop run once (awaiting events resume, messages arrive). */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class IdleWaiter {
  /** An average of how long the worker waited for work when it went idle. */
  private gapMs = MAX_SPIN_MS * 4;

  constructor(private readonly slot: number) {}

  /**
   * Waits until work may be ready (handed over by a producer, or found when going idle), a
   * wake-up, or the sleep's limit. `forWork`: the worker has room to claim events (else only its
   * own awaiting events or a new epoch wake it). `keepLoop`: events of this worker await (or
   * frames wait to be flushed), so the thread's event loop must run meanwhile.
   */
  async wait(forWork: boolean, keepLoop: boolean): Promise<void> {
    const start = clock.now();
    // Spin only while work has recently come back within the spin time; never while the event
    // loop must run (spinning blocks it).
    if (forWork && !keepLoop && this.gapMs <= MAX_SPIN_MS && seek(this.slot, MAX_SPIN_MS, MAX_SEEKERS, workWaiting)) {
      this.gapMs = 0.75 * this.gapMs + 0.25 * (clock.now() - start);
      return;
    }
    await sleep(this.slot, keepLoop ? MAX_SLEEP_MS : MAX_BLOCK_MS, keepLoop, forWork ? workWaiting : undefined);
    if (!keepLoop && clock.now() - start >= MAX_BLOCK_MS) await yieldToLoop();
    this.gapMs = 0.75 * this.gapMs + 0.25 * Math.min(clock.now() - start, 100);
  }
}
