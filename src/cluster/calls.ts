/**
 * `api.cluster` calls from event workers: the cluster lives on the main thread, so a worker asks
 * it over the `cluster` call channel (events/call-channel.ts) and awaits the answer.
 */
import type { MessagePort } from 'node:worker_threads';
import { mainCaller, serveMainCalls } from '../events/call-channel.ts';

export type ClusterOp = 'servers' | 'invoke' | 'sendToAccount';

/** Worker: runs a cluster operation on the main thread. */
export const clusterCall = mainCaller<ClusterOp>('cluster');

/** Main thread: answers a worker's cluster channel with `run`. */
export function serveClusterCalls(channel: MessagePort, run: (op: ClusterOp, args: unknown[]) => Promise<unknown>): void {
  serveMainCalls(channel, run);
}
