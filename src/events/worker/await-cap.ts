/**
 * How many events one event thread lets await at once. Events that wait for I/O gain from many
 * in flight, up to `max_awaiting_events_per_thread`. Events that change objects can lose from
 * it: concurrency is optimistic, so the more events read the same objects before the first of
 * them commits, the more of them conflict and run again. Thousands of transfers in flight over
 * ten thousand accounts ran 1.4 times each on average, and committed fewer events a second
 * than 128 in flight per thread did.
 *
 * So the cap follows the reruns, as a congestion window does: over every window of finished
 * awaiting events it is halved while more than one event in four ran again, and raised by an
 * eighth while fewer than one in ten did. Threads whose events change no objects keep the
 * configured cap.
 */

/** Finished awaiting events per adjustment. */
const WINDOW = 64;
/** Reruns per finished event above which the cap is halved. */
const HIGH = 0.25;
/** Reruns per finished event below which the cap grows. */
const LOW = 0.1;
/** The cap never falls below this (or the configured cap, if lower). */
const MIN = 8;

export class AwaitCap {
  private cap: number;
  private finished = 0;

  constructor(private readonly max: number, private conflictsAt: number) {
    this.cap = max;
  }

  /** Events that may await now. */
  get value(): number {
    return this.cap;
  }

  /** An awaiting event finished; `conflicts` is the thread's object-commit conflicts so far. */
  finishedOne(conflicts: number): void {
    if (++this.finished < WINDOW) return;
    const rate = (conflicts - this.conflictsAt) / this.finished;
    this.finished = 0;
    this.conflictsAt = conflicts;
    if (rate > HIGH) this.cap = Math.max(Math.min(MIN, this.max), this.cap >> 1);
    else if (rate < LOW) this.cap = Math.min(this.max, this.cap + Math.max(1, this.cap >> 3));
  }
}
