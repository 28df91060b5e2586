/**
 * Session operations as plugin code calls them, on any thread: the main thread's go to the
 * running listener directly (`main/ops.ts`); an event worker's become records of its outbound
 * ring (`worker/ops.ts`), on behalf of the event whose code runs.
 */
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';
import type { AccountOp } from './account-calls.ts';
import { mainOps } from './main/ops.ts';
import { workerOps } from './worker/ops.ts';

export interface SessionOps {
  /** A frame to one session, on behalf of `event` (the running event when omitted). */
  sendTo(sessionId: number, type: string, body: unknown, id?: number, event?: RunningEvent | null): void;
  /** Sends a frame already encoded in the session's codec (native plugins encode their own). */
  sendFrame(sessionId: number, frame: string | Uint8Array): void;
  /** Publishes a message already encoded for both codecs. */
  publishFrames(group: string, json: string, msgpack: Uint8Array): void;
  broadcast(sessionIds: readonly number[] | null, type: string, body: unknown): void;
  /** Broadcasts a message already encoded (native plugins); a codec's frame may be null when no named session uses it. */
  broadcastFrames(sessionIds: readonly number[] | null, json: string | null, msgpack: Uint8Array | null): void;
  close(sessionId: number, code: number, reason: string): void;
  join(sessionId: number, group: string, join: boolean): void;
  publish(group: string, type: string, body: unknown): void;
  account(op: AccountOp, args: unknown[]): Promise<unknown>;
}

const cache = new WeakMap<EventRuntime, SessionOps>();

/** The session operations of a thread. */
export function sessionOps(rt: EventRuntime): SessionOps {
  let ops = cache.get(rt);
  if (!ops) {
    ops = rt.role === 'main' ? mainOps(rt) : workerOps(rt);
    cache.set(rt, ops);
  }
  return ops;
}
