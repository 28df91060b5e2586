/**
 * What a native call of an event starts besides its frames (EffectKind invoke and timer, their
 * ids reserved by the addon): held with the event's other effects as a managed handler's invokes
 * and timers are (`RunningEvent.heldInvokes`), made at once when the event holds nothing.
 */
import { native, EventKind } from '../native.ts';
import { workReady } from '../events/wake.ts';
import type { HeldTimer } from '../events/held-counters.ts';
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';

/** Whether `ev` holds what it starts now: its synchronous run, or while it has object changes (as `invoke`). */
function holds(rt: EventRuntime, ev: RunningEvent): boolean {
  return ev === rt.running || ev.tx !== undefined;
}

/**
 * An event a native call of `ev` invoked: held, or queued now. `carriesData`: the addon keeps
 * user data for it (object_transact), released if it is dropped.
 */
export function holdNativeInvoke(rt: EventRuntime, ev: RunningEvent, tag: number, nameId: number, handlerId: number, sessionId: number,
  payload: Uint8Array | null, id: number, carriesData: boolean): void {
  if (ev !== rt.running && ev.timedOut) {
    // Cancelled: what it does now is dropped.
    if (carriesData) native.pluginRevokeEvent(id);
    return;
  }
  if (holds(rt, ev)) {
    (ev.heldInvokes ??= []).push([tag, nameId, handlerId, sessionId, EventKind.user, payload, id, carriesData]);
    return;
  }
  native.push(tag, nameId, handlerId, sessionId, EventKind.user, payload, id);
  workReady();
}

/** A timer a native call of `ev` started: held as `addTimer` holds one, or started now. */
export function holdNativeTimer(rt: EventRuntime, ev: RunningEvent, timer: HeldTimer): void {
  if (ev !== rt.running && ev.timedOut) timer.release();
  else if (holds(rt, ev)) (ev.heldInvokes ??= []).push(timer);
  else timer.apply();
}
