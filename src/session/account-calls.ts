/**
 * Account calls from event workers: the account manager lives on the main thread, so a worker
 * asks it over the `accounts` call channel (events/call-channel.ts) and awaits the answer.
 */
import type { MessagePort } from 'node:worker_threads';
import { mainCaller, serveMainCalls } from '../events/call-channel.ts';

/** Account operations. */
export type AccountOp = 'login' | 'logout' | 'logoutSession' | 'locate' | 'accountOf';

/** Worker: runs an account operation on the main thread and resolves with its result. */
export const accountCall = mainCaller<AccountOp>('accounts');

/** Main thread: answers the account calls arriving on a worker's channel with `run` (with the Cluster component, some answers are promises). */
export function serveAccountCalls(channel: MessagePort, run: (op: AccountOp, args: unknown[]) => unknown): void {
  serveMainCalls(channel, run);
}
