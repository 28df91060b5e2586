/**
 * Events and their objects (SPEC 3.3, 6.2.6): when a handler returns, its changes commit as
 * one transaction; on a conflict the changes are discarded and the handler runs again, up to
 * `max_event_reruns`, then the event fails. An event that used no objects pays one property
 * read. The reruns and the object figures go into the event's profiler sample.
 */
import { native, CompleteField } from '../native.ts';
import { gsfError } from '../errors.ts';
import type { RunningEvent } from '../events/runtime.ts';
import type { EventHandler } from '../events/types.ts';
import type { Transaction } from './transaction.ts';
import { OBJECT, ObjectCounter } from './stats.ts';

const F_ROLLBACKS = CompleteField.rollbacks, F_CREATE = CompleteField.objectCreateCount, F_COUNT = CompleteField.objectCount;
const F_HIT = CompleteField.objectCacheHitRate, F_NOLOCK = CompleteField.objectNolockRate, F_NULL = CompleteField.objectNullRate;

function record(tx: Transaction, timings: Float64Array, t: number): void {
  const s = tx.stats;
  const attempts = s.fetched + s.nonexistent;
  timings[t + F_CREATE] = s.created;
  timings[t + F_COUNT] = s.fetched;
  timings[t + F_HIT] = attempts > 0 ? s.cacheHits / attempts : 0;
  timings[t + F_NOLOCK] = s.fetched > 0 ? s.readMode / s.fetched : 0;
  timings[t + F_NULL] = attempts > 0 ? s.nonexistent / attempts : 0;
}

/**
 * Commits the event's transaction if it changed anything; on a conflict runs `rerun` and
 * settles again. Returns undefined when there was nothing to wait for.
 */
function settle(ev: RunningEvent, rerun: () => unknown, timings: Float64Array, t: number, reruns: number): Promise<void> | undefined {
  const tx = ev.tx as Transaction | undefined;
  if (tx === undefined) return undefined;
  record(tx, timings, t);
  if (!tx.dirty) {
    ev.tx = undefined;
    return undefined;
  }
  return tx.commit().then((result) => {
    ev.tx = undefined;
    timings[t + F_ROLLBACKS] = result.ok ? reruns : reruns + 1;
    if (result.ok) return undefined;
    const max = tx.store.config.maxReruns;
    if (reruns >= max) {
      native.counterIncrease(OBJECT, ObjectCounter.failedAfterReruns, 1);
      throw gsfError('GSF_ERR_OBJECT_CONFLICT', reruns, result.reason);
    }
    native.counterIncrease(OBJECT, ObjectCounter.reruns, 1);
    const again = rerun();
    if (again instanceof Promise) {
      return again.then(() => settle(ev, rerun, timings, t, reruns + 1), (err: unknown) => {
        ev.tx = undefined;
        throw err;
      });
    }
    return settle(ev, rerun, timings, t, reruns + 1);
  }, (err: unknown) => {
    ev.tx = undefined;
    throw err;
  });
}

/**
 * Runs an event's handler with its objects: the handler's own result when it used none,
 * else a promise that settles once its changes are durable (or it failed). `timings[t…]` is
 * the event's profiler record.
 */
export function runWithObjects<P>(fn: EventHandler<P>, payload: P, ev: RunningEvent, timings: Float64Array, t: number): unknown {
  const rerun = (): unknown => fn(payload, ev);
  const result = fn(payload, ev);
  if (result instanceof Promise) {
    return result.then(() => settle(ev, rerun, timings, t, 0), (err: unknown) => {
      (ev.tx as Transaction | undefined)?.discard();
      ev.tx = undefined;
      throw err;
    });
  }
  if (ev.tx === undefined) return result;
  return settle(ev, rerun, timings, t, 0);
}
