/** Baseline piscina worker: one task per event, running the same handlers inline (`name` picks one). */
import { cpuWork } from './cpu-work.ts';

/** The trivial handler: takes the event's payload and does nothing with it. */
export function noop(_payload: unknown): void {}

/** The ~50 µs CPU-bound handler; its payload is the iteration count, as gsf's gets. */
export function cpu(iterations: number): void {
  cpuWork(iterations);
}

// piscina loads a worker's default export when the thread starts.
export default noop;
