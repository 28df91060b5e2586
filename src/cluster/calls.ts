/**
 * `api.cluster` calls from event workers: the cluster lives on the main thread, so a worker
 * asks it over its own `cluster` channel and awaits the answer (as account calls do).
 */
import { MessageChannel, parentPort, threadId, type MessagePort } from 'node:worker_threads';
import type { ChannelHello } from '../events/types.ts';

export type ClusterOp = 'servers' | 'invoke' | 'sendToAccount';

/** Worker → main on the cluster channel. */
export interface ClusterRequest {
  rid: number;
  op: ClusterOp;
  args: unknown[];
}

/** Main → worker. */
export interface ClusterResponse {
  rid: number;
  ok: boolean;
  value?: unknown;
  error?: { code?: string; message: string };
}

let port: MessagePort | null = null;
let nextRid = 1;
const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

/** Worker: runs a cluster operation on the main thread. */
export function clusterCall(op: ClusterOp, args: unknown[]): Promise<unknown> {
  if (port === null) {
    if (parentPort === null) return Promise.reject(new Error('cluster calls need an event worker or the main thread'));
    const { port1, port2 } = new MessageChannel();
    const hello: ChannelHello = { type: 'channel', channel: 'cluster', threadId, port: port2 };
    parentPort.postMessage(hello, [port2]);
    port1.on('message', (r: ClusterResponse) => {
      const p = pending.get(r.rid);
      if (!p) return;
      pending.delete(r.rid);
      if (r.ok) p.resolve(r.value);
      else p.reject(Object.assign(new Error(r.error?.message ?? 'cluster call failed'), { code: r.error?.code }));
    });
    port1.unref();
    port = port1;
  }
  const rid = nextRid++;
  return new Promise((resolve, reject) => {
    pending.set(rid, { resolve, reject });
    port!.postMessage({ rid, op, args } satisfies ClusterRequest);
  });
}

/** Main thread: answers a worker's cluster channel with `run`. */
export function serveClusterCalls(channel: MessagePort, run: (op: ClusterOp, args: unknown[]) => Promise<unknown>): void {
  channel.on('message', (req: ClusterRequest) => {
    run(req.op, req.args).then(
      (value) => channel.postMessage({ rid: req.rid, ok: true, value } satisfies ClusterResponse),
      (err: unknown) => {
        const e = err as { code?: string; message?: string };
        channel.postMessage({ rid: req.rid, ok: false, error: { code: e?.code, message: e?.message ?? String(err) } } satisfies ClusterResponse);
      });
  });
}
