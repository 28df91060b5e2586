/** Session operations of plugin code on the main thread: straight to the running listener. */
import type { EventRuntime } from '../../events/runtime.ts';
import { gsfError, type GsfError } from '../../errors.ts';
import { encodeFrame, sessionCodec } from '../codec.ts';
import type { AccountOp } from '../account-calls.ts';
import type { SessionOps } from '../ops.ts';

/** What the main thread's listener offers to plugin code running there. */
export interface MainSessionTarget {
  send(sessionId: number, frame: string | Uint8Array): void;
  broadcast(sessionIds: readonly number[] | null, json: Uint8Array, msgpack: Uint8Array): void;
  close(sessionId: number, code: number, reason: string): void;
  group(sessionId: number, group: string, join: boolean): void;
  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void;
  account(op: AccountOp, args: unknown[]): unknown;
}

const encode = encodeFrame, codecOf = sessionCodec;
const utf8 = new TextEncoder();

let mainTarget: MainSessionTarget | null = null;

/** What an account call gets on a server without sessions: no account can log in there. */
export function noAccounts(op: AccountOp): GsfError {
  return gsfError('GSF_ERR_UNAVAILABLE', `accounts.${op}: this server has no SessionService (the manifest lists none), so no account logs in here`);
}

/** Set by the session feature while it runs (main thread only). */
export function setMainSessionTarget(target: MainSessionTarget | null): void {
  mainTarget = target;
}

/** The main thread's session operations. */
export function mainOps(rt: EventRuntime): SessionOps {
  const target = (): MainSessionTarget | null => {
    if (mainTarget === null) rt.log.vlog(1, 'session operation dropped: no SessionService is running');
    return mainTarget;
  };
  return {
    sendTo(sessionId, type, body, id) {
      target()?.send(sessionId, encode(codecOf(sessionId), type, body, id));
    },
    sendFrame(sessionId, frame) {
      target()?.send(sessionId, frame);
    },
    publishFrames(group, json, msgpack) {
      target()?.publish(group, utf8.encode(json), msgpack);
    },
    broadcast(sessionIds, type, body) {
      target()?.broadcast(sessionIds === null ? null : [...sessionIds], utf8.encode(encode('json', type, body) as string),
        encode('msgpack', type, body) as Uint8Array);
    },
    broadcastFrames(sessionIds, json, msgpack) {
      target()?.broadcast(sessionIds, utf8.encode(json ?? ''), msgpack ?? new Uint8Array(0));
    },
    close(sessionId, code, reason) {
      target()?.close(sessionId, code, reason);
    },
    join(sessionId, group, join) {
      target()?.group(sessionId, group, join);
    },
    publish(group, type, body) {
      target()?.publish(group, utf8.encode(encode('json', type, body) as string), encode('msgpack', type, body) as Uint8Array);
    },
    async account(op, args) {
      if (!mainTarget) throw noAccounts(op);
      return mainTarget.account(op, args);
    },
  };
}

