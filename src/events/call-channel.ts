/**
 * Calls from event workers to the main thread, one channel per feature ('accounts', 'cluster'):
 * the feature's state lives on the main thread, so a worker posts a request on its own port
 * and awaits the answer. The worker half (`mainCaller`) and the main-thread half
 * (`serveMainCalls`) share the message types below; an error keeps its `code` across.
 */
import { MessageChannel, parentPort, threadId, type MessagePort } from 'node:worker_threads';
import { describeError, gsfError } from '../errors.ts';
import type { ChannelHello, ChannelName } from './types.ts';

/** Worker → main. */
export interface MainCallRequest<Op extends string = string> {
  rid: number;
  op: Op;
  args: unknown[];
}

/** Main → worker. */
export interface MainCallResponse {
  rid: number;
  ok: boolean;
  value?: unknown;
  error?: { code?: string; message: string };
}

/**
 * Worker: a function that runs `op` on the main thread over `channel`'s port, opened on first
 * use. The main thread closes the port when its feature stops (the server stops): calls still
 * waiting then, and every later one, fail with GSF_ERR_SHUTTING_DOWN rather than wait for good.
 */
export function mainCaller<Op extends string>(channel: ChannelName): (op: Op, args: unknown[]) => Promise<unknown> {
  let port: MessagePort | null = null;
  let closed = false;
  let nextRid = 1;
  const pending = new Map<number, { op: Op; resolve(v: unknown): void; reject(e: Error): void }>();
  const refused = (op: Op): Error => gsfError('GSF_ERR_SHUTTING_DOWN', `${channel} call '${op}'`);
  return (op, args) => {
    if (closed) return Promise.reject(refused(op));
    if (port === null) {
      if (parentPort === null) return Promise.reject(new Error(`${channel} calls need an event worker or the main thread`));
      const { port1, port2 } = new MessageChannel();
      const hello: ChannelHello = { type: 'channel', channel, threadId, port: port2 };
      parentPort.postMessage(hello, [port2]);
      port1.on('message', (r: MainCallResponse) => {
        const p = pending.get(r.rid);
        if (!p) return;
        pending.delete(r.rid);
        if (r.ok) p.resolve(r.value);
        else p.reject(Object.assign(new Error(r.error?.message ?? `${channel} call failed`), r.error?.code === undefined ? {} : { code: r.error.code }));
      });
      port1.once('close', () => {
        closed = true;
        for (const p of pending.values()) p.reject(refused(p.op));
        pending.clear();
      });
      port1.unref();
      port = port1;
    }
    const rid = nextRid++;
    const target = port;
    return new Promise((resolve, reject) => {
      try {
        target.postMessage({ rid, op, args } satisfies MainCallRequest<Op>);
      } catch (err) {
        // Arguments a thread cannot hand over (a function, a payload nested too deep): nothing was sent.
        reject(gsfError('GSF_ERR_BAD_ARGUMENT', `${channel} call '${op}': the arguments cannot be sent to the main thread (${describeError(err)})`));
        return;
      }
      pending.set(rid, { op, resolve, reject });
    });
  };
}

/** Main thread: answers the calls arriving on a worker's channel with `run` (which may return a promise). */
export function serveMainCalls<Op extends string>(channel: MessagePort, run: (op: Op, args: unknown[]) => unknown): void {
  channel.on('message', (req: MainCallRequest<Op>) => {
    const failed = (err: unknown): void => {
      const e = err as { code?: unknown; message?: unknown } | null;
      const code = typeof e?.code === 'string' ? e.code : undefined;
      const message = err instanceof Error ? err.message : typeof e?.message === 'string' ? e.message : String(err);
      channel.postMessage({ rid: req.rid, ok: false, error: code === undefined ? { message } : { code, message } } satisfies MainCallResponse);
    };
    // An answer that cannot be handed over is answered with why, rather than never (or thrown here).
    const answer = (value: unknown): void => {
      try {
        channel.postMessage({ rid: req.rid, ok: true, value } satisfies MainCallResponse);
      } catch (err) {
        failed(gsfError('GSF_ERR_BAD_ARGUMENT', `the answer to '${req.op}' cannot be sent to the worker (${describeError(err)})`));
      }
    };
    try {
      const value = run(req.op, req.args);
      if (value instanceof Promise) value.then(answer, failed);
      else answer(value);
    } catch (err) {
      failed(err);
    }
  });
}
