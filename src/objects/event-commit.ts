/**
 * Events and their objects (SPEC 3.3, 6.2.6): when a handler returns, its changes commit as
 * one transaction; on a conflict the changes are discarded and the handler runs again, up to
 * `max_event_reruns`, then the event fails. The event worker holds everything the event
 * produced meanwhile (frames, children) and lets it out only once the changes are durable.
 * The reruns and the object figures go into the event's profiler sample.
 */
import { native, CompleteField } from '../native.ts';
import { gsfError } from '../errors.ts';
import type { EventObjects } from '../events/types.ts';
import type { Transaction } from './transaction.ts';
import { OBJECT, ObjectCounter } from './stats.ts';
import { commitsInFlight } from './thread-store.ts';

const F_ROLLBACKS = CompleteField.rollbacks, F_CREATE = CompleteField.objectCreateCount, F_COUNT = CompleteField.objectCount;
const F_HIT = CompleteField.objectCacheHitRate, F_NOLOCK = CompleteField.objectNolockRate, F_NULL = CompleteField.objectNullRate;

function record(tx: Transaction, timings: Float64Array, at = 0): void {
  const s = tx.stats;
  const attempts = s.fetched + s.nonexistent;
  timings[at + F_CREATE] = s.created;
  timings[at + F_COUNT] = s.fetched;
  timings[at + F_HIT] = attempts > 0 ? s.cacheHits / attempts : 0;
  timings[at + F_NOLOCK] = s.fetched > 0 ? s.readMode / s.fetched : 0;
  timings[at + F_NULL] = attempts > 0 ? s.nonexistent / attempts : 0;
}

type Holder = { tx?: unknown; timedOut?: boolean };

/** Drops the changes of an event that timed out: it commits nothing more and does not run again. */
function dropTimedOut(ev: Holder): boolean {
  if (ev.timedOut !== true) return false;
  (ev.tx as Transaction | undefined)?.discard();
  ev.tx = undefined;
  return true;
}

/** The longest wait before a rerun is 2^6 = 64 ms. */
const MAX_BACKOFF_EXPONENT = 6;

/** Commits, and reruns on conflicts, until the changes are durable or the limit is reached. */
async function commit(ev: Holder & { id?: number }, timings: Float64Array, rerun: () => unknown): Promise<void> {
  // The writer answered a conflict: this event has the turn on the object (writer/turns.ts)
  // until its next commit; leaving without one lets the turn go at once.
  let turn: Transaction | null = null;
  try {
    // Reruns after waiting for their turn or an older event's reservation are the order at
    // work, not a livelock: they do not count toward max_event_reruns (`limited`).
    for (let reruns = 0, limited = 0; ; reruns++) {
      const tx = ev.tx as Transaction | undefined;
      if (tx === undefined || dropTimedOut(ev)) return;
      record(tx, timings);
      timings[F_ROLLBACKS] = reruns;
      // The handler committed (or discarded) its transaction itself: nothing is left to commit.
      if (tx.finished) return;
      // It started the commit and returned without awaiting it: the event ends with that commit.
      // A failure fails the event; a conflict too (logged and counted), as nobody saw it.
      const own = tx.ownCommit;
      if (own !== null) {
        const result = await own;
        if (!result.ok) throw gsfError('GSF_ERR_OBJECT_CONFLICT', 0, `${result.reason} (the handler started the commit itself and did not await it)`);
        return;
      }
      if (!tx.dirty) {
        tx.discard();
        return;
      }
      turn = null;
      const result = await tx.commit();
      if (result.ok) return;
      turn = tx;
      eventObjects.conflicts++;
      timings[F_ROLLBACKS] = reruns + 1;
      if (!result.waited && limited++ >= tx.store.config.maxReruns) {
        native.counterIncrease(OBJECT, ObjectCounter.failedAfterReruns, 1);
        // `ev.tx` stays: the event failed with object changes, so what its last run held is dropped.
        throw gsfError('GSF_ERR_OBJECT_CONFLICT', reruns, result.reason);
      }
      ev.tx = undefined;
      native.counterIncrease(OBJECT, ObjectCounter.reruns, 1);
      // An answer that waited for its turn reruns at once: the objects are its now. Otherwise
      // (its first conflict, nobody in line, or a commit from another server) events that
      // collided are likely to collide again if they all rerun at once: each waits a random
      // time that doubles with its unlimited reruns (1, 2, 4, … ms at most, never over 64 ms:
      // an unbounded doubling would sleep past any event timeout) before it tries again.
      if (!result.waited) await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** Math.min(limited - 1, MAX_BACKOFF_EXPONENT)));
      if (dropTimedOut(ev)) return;
      await rerun();
    }
  } finally {
    if (turn !== null) letGo(turn, ev.id);
  }
}

/** Tells the writer that event `owner` will not commit again: the turns it held pass on. */
function letGo(tx: Transaction, owner: number | undefined): void {
  if (owner === undefined || owner === 0) return;
  tx.store.writer().commit([], owner).catch(() => undefined);
}

/** The object model's side of the event runtime (`EventRuntime.objects`). */
export const eventObjects: EventObjects & { conflicts: number } = {
  conflicts: 0,
  get inFlight() {
    return commitsInFlight();
  },
  commit: (ev, timings, rerun) => commit(ev, timings, rerun),
  changed: (ev) => (ev.tx as Transaction | undefined)?.dirty === true,
  finishClean(ev, timings, at) {
    const tx = ev.tx as Transaction | undefined;
    if (tx === undefined) return true;
    if (tx.dirty) return false;
    record(tx, timings, at);
    tx.discard();
    ev.tx = undefined;
    return true;
  },
  discard(ev) {
    (ev.tx as Transaction | undefined)?.discard();
    ev.tx = undefined;
  },
};
