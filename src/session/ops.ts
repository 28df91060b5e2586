/**
 * Session operations as plugin code calls them, on any thread. Workers encode frames and
 * queue them for the main thread (`outbound.ts`); the main thread hands them to the running
 * session service directly. Both build the same `Op` records.
 */
import type { EventRuntime } from '../events/runtime.ts';
import { encodeFrame, sessionCodec } from './codec.ts';
import { accountCall, Op, queueOp, queueSend, type AccountOp } from './outbound.ts';

/** What the main thread's session service offers to plugin code running there. */
export interface MainSessionTarget {
  applyOps(ops: unknown[]): void;
  account(op: AccountOp, args: unknown[]): unknown;
}

// Module bindings are getters under the CommonJS transform event workers load with: the ones
// used per message are read once.
const encode = encodeFrame, codecOf = sessionCodec, queue = queueOp, queueOneSend = queueSend, SEND = Op.send;

let mainTarget: MainSessionTarget | null = null;

/** Set by the session service while it runs (main thread only). */
export function setMainSessionTarget(target: MainSessionTarget | null): void {
  mainTarget = target;
}

export interface SessionOps {
  sendTo(sessionId: number, type: string, body: unknown, id?: number): void;
  /** Sends a frame already encoded in the session's codec (native plugins encode their own). */
  sendFrame(sessionId: number, frame: string | Uint8Array): void;
  /** Publishes a message already encoded for both codecs. */
  publishFrames(group: string, json: string, msgpack: Uint8Array): void;
  broadcast(sessionIds: readonly number[] | null, type: string, body: unknown): void;
  close(sessionId: number, code: number, reason: string): void;
  join(sessionId: number, group: string, join: boolean): void;
  publish(group: string, type: string, body: unknown): void;
  account(op: AccountOp, args: unknown[]): Promise<unknown>;
}

const cache = new WeakMap<EventRuntime, SessionOps>();

/** The session operations of a thread. */
export function sessionOps(rt: EventRuntime): SessionOps {
  let ops = cache.get(rt);
  if (ops) return ops;
  const main = rt.role === 'main';
  const submit = (op: unknown[]): void => {
    if (!main) {
      queue(op, rt.running !== null);
      return;
    }
    if (mainTarget) mainTarget.applyOps(op);
    else rt.log.vlog(1, 'session operation dropped: no SessionService is running');
  };
  ops = {
    sendTo(sessionId, type, body, id) {
      const frame = encode(codecOf(sessionId), type, body, id);
      if (main) submit([SEND, sessionId, frame]);
      else queueOneSend(sessionId, frame, rt.running !== null);
    },
    sendFrame(sessionId, frame) {
      if (main) submit([SEND, sessionId, frame]);
      else queueOneSend(sessionId, frame, rt.running !== null);
    },
    publishFrames(group, json, msgpack) {
      submit([Op.publish, group, json, msgpack]);
    },
    broadcast(sessionIds, type, body) {
      let json: string | Uint8Array | null = null;
      let msgpack: string | Uint8Array | null = null;
      const needJson = sessionIds === null || sessionIds.some((id) => id % 2 === 0);
      const needMsgpack = sessionIds === null || sessionIds.some((id) => id % 2 === 1);
      if (needJson) json = encodeFrame('json', type, body);
      if (needMsgpack) msgpack = encodeFrame('msgpack', type, body);
      submit([Op.broadcast, json, msgpack, sessionIds === null ? null : [...sessionIds]]);
    },
    close(sessionId, code, reason) {
      submit([Op.close, sessionId, code, reason]);
    },
    join(sessionId, group, join) {
      submit([join ? Op.join : Op.leave, sessionId, group]);
    },
    publish(group, type, body) {
      submit([Op.publish, group, encodeFrame('json', type, body), encodeFrame('msgpack', type, body)]);
    },
    async account(op, args) {
      if (!main) return accountCall(op, args);
      if (!mainTarget) throw new Error('no SessionService is running');
      return mainTarget.account(op, args);
    },
  };
  cache.set(rt, ops);
  return ops;
}
