/**
 * The one place that finds the running event's transaction: the event whose code runs, also
 * after an await inside an async handler (`EventRuntime.current`).
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
  const ev = rt.current();
  if (ev === null) throw gsfError('GSF_ERR_OBJECT_NO_EVENT', what);
  return transactionOf(ev);
}
