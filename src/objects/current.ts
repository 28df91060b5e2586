/**
 * The one place that finds the running event's transaction. Today that is the event the thread
 * runs (`rt.running`); when events wait on several at once, only this function changes.
 */
import { gsfError } from '../errors.ts';
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';
import { Transaction } from './transaction.ts';
import { threadStore } from './thread-store.ts';

/** The transaction of an event, created on first use. */
export function transactionOf(ev: RunningEvent): Transaction {
  return (ev.tx as Transaction | undefined) ?? (ev.tx = new Transaction(threadStore(), ev));
}

/** The running event's transaction; `what` names the call in the error outside events. */
export function currentTransaction(rt: EventRuntime, what = 'transaction'): Transaction {
  const ev = rt.running;
  if (ev === null) throw gsfError('GSF_ERR_OBJECT_NO_EVENT', what);
  return transactionOf(ev);
}
