/**
 * Session operations as plugin code calls them, on any thread. On event workers they become
 * records of the worker's outbound ring (`outbound-writer.ts`), on behalf of the event whose
 * code runs; on the main thread they go to the running listener directly.
 */
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';
import { encodeFrame, encodeFrameTransient, sessionCodec } from './codec.ts';
import { accountCall, type AccountOp } from './account-calls.ts';
import { OutboundWriter } from './outbound-writer.ts';

/** What the main thread's listener offers to plugin code running there. */
export interface MainSessionTarget {
  send(sessionId: number, frame: string | Uint8Array): void;
  broadcast(sessionIds: readonly number[] | null, json: Uint8Array, msgpack: Uint8Array): void;
  close(sessionId: number, code: number, reason: string): void;
  group(sessionId: number, group: string, join: boolean): void;
  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void;
  account(op: AccountOp, args: unknown[]): unknown;
}

// Module bindings are getters under the CommonJS transform event workers load with: the ones
// used per message are read once.
const encode = encodeFrame, encodeNow = encodeFrameTransient, codecOf = sessionCodec;
const utf8 = new TextEncoder();

let mainTarget: MainSessionTarget | null = null;

/** Set by the session feature while it runs (main thread only). */
export function setMainSessionTarget(target: MainSessionTarget | null): void {
  mainTarget = target;
}

export interface SessionOps {
  /** A frame to one session, on behalf of `event` (the running event when omitted). */
  sendTo(sessionId: number, type: string, body: unknown, id?: number, event?: RunningEvent | null): void;
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

function mainOps(rt: EventRuntime): SessionOps {
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
      if (!mainTarget) throw new Error('no SessionService is running');
      return mainTarget.account(op, args);
    },
  };
}

/** The writer of this worker, made (and connected to the main thread) with the first session registration. */
let writer: OutboundWriter | null = null;

function workerOps(rt: EventRuntime): SessionOps {
  if (writer === null) {
    writer = new OutboundWriter();
    writer.connect();
  }
  const out = writer;
  rt.effects = out;
  return {
    sendTo(sessionId, type, body, id, event) {
      // The writer copies the frame into the ring at once (or keeps a copy when it holds it).
      out.send(sessionId, encodeNow(codecOf(sessionId), type, body, id), event === undefined ? rt.current() : event);
    },
    sendFrame(sessionId, frame) {
      out.send(sessionId, frame, rt.current());
    },
    publishFrames(group, json, msgpack) {
      out.publish(group, json, msgpack, rt.current());
    },
    broadcast(sessionIds, type, body) {
      const needJson = sessionIds === null || sessionIds.some((id) => id % 2 === 0);
      const needMsgpack = sessionIds === null || sessionIds.some((id) => id % 2 === 1);
      out.broadcast(sessionIds === null ? null : [...sessionIds], needJson ? encode('json', type, body) as string : null,
        needMsgpack ? encode('msgpack', type, body) as Uint8Array : null, rt.current());
    },
    close(sessionId, code, reason) {
      out.close(sessionId, code, reason, rt.current());
    },
    join(sessionId, group, join) {
      out.group(sessionId, group, join, rt.current());
    },
    publish(group, type, body) {
      out.publish(group, encode('json', type, body) as string, encode('msgpack', type, body) as Uint8Array, rt.current());
    },
    account(op, args) {
      return accountCall(op, args);
    },
  };
}

/** The session operations of a thread. */
export function sessionOps(rt: EventRuntime): SessionOps {
  let ops = cache.get(rt);
  if (!ops) {
    ops = rt.role === 'main' ? mainOps(rt) : workerOps(rt);
    cache.set(rt, ops);
  }
  return ops;
}
