/**
 * Account calls from event workers: the account manager lives on the main thread, so a
 * worker asks it over its own `accounts` channel and awaits the answer.
 */
import { MessageChannel, parentPort, threadId, type MessagePort } from 'node:worker_threads';
import type { ChannelHello } from '../events/types.ts';

/** Account operations. */
export type AccountOp = 'login' | 'logout' | 'logoutSession' | 'locate' | 'accountOf';

/** Worker → main on the accounts channel. */
export interface AccountRequest {
  rid: number;
  op: AccountOp;
  args: unknown[];
}

/** Main → worker on the accounts channel. */
export interface AccountResponse {
  rid: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

let port: MessagePort | null = null;
let nextRid = 1;
const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

/** Worker: runs an account operation on the main thread and resolves with its result. */
export function accountCall(op: AccountOp, args: unknown[]): Promise<unknown> {
  if (port === null) {
    if (parentPort === null) return Promise.reject(new Error('account calls need an event worker or the main thread'));
    const { port1, port2 } = new MessageChannel();
    const hello: ChannelHello = { type: 'channel', channel: 'accounts', threadId, port: port2 };
    parentPort.postMessage(hello, [port2]);
    port1.on('message', (r: AccountResponse) => {
      const p = pending.get(r.rid);
      if (!p) return;
      pending.delete(r.rid);
      if (r.ok) p.resolve(r.value);
      else p.reject(new Error(r.error ?? 'account call failed'));
    });
    port1.unref();
    port = port1;
  }
  const rid = nextRid++;
  return new Promise((resolve, reject) => {
    pending.set(rid, { resolve, reject });
    const req: AccountRequest = { rid, op, args };
    port!.postMessage(req);
  });
}

/** Main thread: answers the account calls arriving on a worker's channel with `run`. */
export function serveAccountCalls(channel: MessagePort, run: (op: AccountOp, args: unknown[]) => unknown): void {
  // With the Cluster component some answers come from Redis: an operation may return a promise.
  channel.on('message', (req: AccountRequest) => {
    const failed = (err: unknown): void => {
      channel.postMessage({ rid: req.rid, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies AccountResponse);
    };
    try {
      const value = run(req.op, req.args);
      if (value instanceof Promise) value.then((v) => channel.postMessage({ rid: req.rid, ok: true, value: v } satisfies AccountResponse), failed);
      else channel.postMessage({ rid: req.rid, ok: true, value } satisfies AccountResponse);
    } catch (err) {
      failed(err);
    }
  });
}
