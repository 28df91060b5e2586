/**
 * Takes back what `ev`'s synchronous run has sent so far (frames, closes, group changes): its
 * object changes were discarded, and what it sent goes with them. Its failure is answered after.
 */
import type { EventRuntime, RunningEvent } from './runtime.ts';

export function dropSent(rt: EventRuntime, ev: RunningEvent): void {
  rt.effects?.hold(ev);
  rt.effects?.discard(ev);
}
