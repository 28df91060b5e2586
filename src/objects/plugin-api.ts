/**
 * `api.objects`: the running event's objects (through `currentTransaction`) and transactions
 * of their own outside events (`transact`).
 */
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';
import type { EventRuntime } from '../events/runtime.ts';
import { currentTransaction } from './current.ts';
import { eventObjects } from './event-commit.ts';
import { Transaction } from './transaction.ts';
import { threadStore } from './thread-store.ts';
import { OBJECT, ObjectCounter } from './stats.ts';
import type { EventTransaction, ObjectAccess, ObjectsApi } from './types.ts';

/** A transaction seen through the typed interface (the types come from the declarations). */
export function typedAccess(tx: Transaction): ObjectAccess {
  return {
    create: (type, fields, options) => tx.create(type, fields as Record<string, unknown>, options) as never,
    fetch: (type, id, mode) => tx.fetch(type, id, mode) as never,
    fetchBy: (type, field, value, mode) => tx.fetchBy(type, field, value, mode) as never,
    fetchCached: (type, id, mode) => tx.fetchCached(type, id, mode) as never,
    fetchCachedBy: (type, field, value, mode) => tx.fetchCachedBy(type, field, value, mode) as never,
    delete: (object) => tx.delete(object),
  };
}

/** The typed view of an event's transaction (the same object for the same transaction). */
export function eventTransaction(tx: Transaction): EventTransaction {
  let view = tx.view as EventTransaction | undefined;
  if (!view) {
    view = {
      ...typedAccess(tx),
      get dirty() { return tx.dirty; },
      get stats() { return tx.stats; },
      commit: () => tx.commit(),
      discard: () => tx.discard(),
    };
    tx.view = view;
  }
  return view;
}

/** Runs `fn` in its own transaction and commits, again on conflict (up to max_event_reruns). */
export async function transact<T>(fn: (tx: ObjectAccess) => T | Promise<T>): Promise<T> {
  const store = threadStore();
  // An owner id from the events' sequence, kept across reruns: when commits conflict, the
  // writer reserves the objects for the oldest transaction, as it does for events, so many
  // transactions racing for the same objects converge instead of rerunning each other out.
  const owner = { ioWaitMs: 0, id: native.reserveEventId() };
  // After a conflict it has the turn on the object (writer/turns.ts) until it commits again.
  let turn = false;
  try {
    for (let reruns = 0, limited = 0; ; reruns++) {
      const tx = new Transaction(store, owner);
      let value: T;
      try {
        value = await fn(typedAccess(tx));
      } catch (err) {
        tx.discard();
        throw err;
      }
      turn = false;
      const result = await tx.commit();
      if (result.ok) return value;
      turn = true;
      // A conflict answered after waiting for its turn is the order at work, not a livelock.
      if (!result.waited && limited++ >= store.config.maxReruns) {
        native.counterIncrease(OBJECT, ObjectCounter.failedAfterReruns, 1);
        throw gsfError('GSF_ERR_OBJECT_CONFLICT', reruns, result.reason);
      }
      native.counterIncrease(OBJECT, ObjectCounter.reruns, 1);
    }
  } finally {
    // Leaving without committing again: the turn passes on at once.
    if (turn) store.writer().commit([], owner.id).catch(() => undefined);
  }
}

/** A promise of `fn`'s result, rejected (never thrown) when it throws, as an async function's. */
function settled<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Creates `api.objects` for one thread's runtime. */
export function createObjectsApi(rt: EventRuntime): ObjectsApi {
  rt.objects = eventObjects;
  const tx = (what: string): Transaction => currentTransaction(rt, what);
  return {
    create: (type, fields, options) => tx('create').create(type, fields as Record<string, unknown>, options) as never,
    fetch: (type, id, mode) => settled(() => tx('fetch').fetch(type, id, mode)) as never,
    fetchBy: (type, field, value, mode) => settled(() => tx('fetchBy').fetchBy(type, field, value, mode)) as never,
    fetchCached: (type, id, mode) => tx('fetchCached').fetchCached(type, id, mode) as never,
    fetchCachedBy: (type, field, value, mode) => tx('fetchCachedBy').fetchCachedBy(type, field, value, mode) as never,
    delete: (object) => tx('delete').delete(object),
    transaction: () => eventTransaction(tx('transaction')),
    transact,
    types: () => threadStore().model.types.map((t) => t.name),
  };
}
