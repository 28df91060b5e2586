/**
 * Transactions of native plugins (ABI 1.2 object_transact): gsf queues the event
 * `_native.transact` with the transaction's key; its handler runs the plugin's body on a
 * transaction of its own and commits it, again on a conflict (up to max_event_reruns, as
 * api.objects.transact), dropping what the failed run produced. The plugin's `done` then runs in
 * the same event with the outcome, and its user data is released exactly once.
 */
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';
import { decodePayload } from '../events/codec.ts';
import { takesRawPayload, type EventRuntime, type RunningEvent } from '../events/runtime.ts';
import type { EventContext } from '../events/types.ts';
import { Transaction } from '../objects/transaction.ts';
import { threadStore } from '../objects/thread-store.ts';
import { OBJECT, ObjectCounter } from '../objects/stats.ts';
import type { SessionOps } from '../session/ops.ts';
import { NATIVE_TRANSACT_EVENT, contextCells, countCachedReads, settleNativeCall, type NativeCallEnv } from './native-calls.ts';
import { ResultAnswer } from './native-results.ts';


/** Registers the `_native.transact` event on this thread once. */
export function addTransactEvent(rt: EventRuntime, ops: SessionOps): void {
  if (rt.handlers.has(NATIVE_TRANSACT_EVENT)) return;
  rt.addHandler('gsf', NATIVE_TRANSACT_EVENT, takesRawPayload((bytes: Uint8Array | null, ctx: EventContext): Promise<void> => {
    const ev = ctx as RunningEvent;
    const [key, plugin] = decodePayload(bytes!, 0, bytes!.length) as [number, string];
    return transact({ rt, ev, ops, log: rt.log, plugin, what: 'transaction', name: ev.name }, key);
  }) as never);
}

/** Runs the body until its changes commit; the outcome is `done`'s. */
async function transact(env: NativeCallEnv, key: number): Promise<void> {
  const { rt, ev } = env;
  let store: ReturnType<typeof threadStore> | undefined;
  let outcome = ResultAnswer.ok('', null, 0);
  // After a conflict the transaction has the turn on the object until it commits again (as events).
  let turn = false;
  try {
    store = threadStore();
    for (let reruns = 0, limited = 0; ; reruns++) {
      if (reruns > 0) {
        // What the run that conflicted produced is dropped with its changes.
        rt.effects?.discard(ev);
        rt.dropInvokes(ev);
        ev.nativeObjects = undefined;
      }
      const tx = new Transaction(store, ev);
      ev.tx = tx;
      contextCells(ev);
      const out = native.pluginRunTransaction(key);
      countCachedReads(ev);
      await settleNativeCall(out, env);
      if (ev.timedOut) {
        tx.discard();
        ev.tx = undefined;
        native.pluginDropTransaction(key);
        return;
      }
      if (!tx.dirty) {
        tx.discard();
        break;
      }
      turn = false;
      const result = await tx.commit();
      if (result.ok) break;
      turn = true;
      if (!result.waited && limited++ >= store.config.maxReruns) {
        native.counterIncrease(OBJECT, ObjectCounter.failedAfterReruns, 1);
        throw gsfError('GSF_ERR_OBJECT_CONFLICT', reruns, result.reason);
      }
      native.counterIncrease(OBJECT, ObjectCounter.reruns, 1);
    }
  } catch (err) {
    (ev.tx as Transaction | undefined)?.discard();
    // Nothing the failed transaction did is let out; `done` hears of the failure.
    rt.effects?.discard(ev);
    rt.dropInvokes(ev);
    outcome = ResultAnswer.failed(err);
  } finally {
    ev.tx = undefined;
    ev.nativeObjects = undefined;
    if (turn) store?.writer().commit([], ev.id).catch(() => undefined);
  }
  if (ev.timedOut) {
    native.pluginDropTransaction(key);
    return;
  }
  contextCells(ev);
  const out = native.pluginFinishTransaction(key, outcome.status, outcome.code, outcome.message);
  countCachedReads(ev);
  // Without a `done`, a failure fails the event (logged, as a managed transact's rejection).
  await settleNativeCall(out, env);
}
