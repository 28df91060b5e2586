/** Session operations of plugin code on an event worker: records of the worker's outbound ring. */
import type { EventRuntime } from '../../events/runtime.ts';
import { encodeFrame, encodeFrameTransient, sessionCodec } from '../codec.ts';
import { accountCall } from '../account-calls.ts';
import { OutboundWriter } from './outbound-writer.ts';
import type { SessionOps } from '../ops.ts';
import { native } from '../../native.ts';

// Module bindings are getters under the CommonJS transform event workers load with: the ones
// used per message are read once.
const encode = encodeFrame, encodeNow = encodeFrameTransient, codecOf = sessionCodec;

/** The writer of this worker, made (and connected to the main thread) with the first session registration. */
let writer: OutboundWriter | null = null;

/** This event worker's session operations (its outbound writer is made with the first). */
export function workerOps(rt: EventRuntime): SessionOps {
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
    broadcastFrames(sessionIds, json, msgpack) {
      out.broadcast(sessionIds, json, msgpack, rt.current());
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
      if (op === 'accountOf' || op === 'locate') return accountCall(op, args);
      // A change: the session accounts, which a native account_of reads inside its call, may be
      // behind until it is answered (a later event of the session must see it).
      native.sessionAccountChanging(1);
      const done = (): void => native.sessionAccountChanging(-1);
      const answer = accountCall(op, args);
      answer.then(done, done);
      return answer;
    },
  };
}

