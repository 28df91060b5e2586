/**
 * Object counters (SPEC 2.5): stored in the native counter store, so the writer and every event
 * thread update them directly. Figures computed from other figures (means, cache numbers, per
 * type counts) are callable counters registered by the main thread (see `counters.ts`).
 */
import { native } from '../native.ts';
import { Status, type Outcome } from './storage.ts';

export const OBJECT = 'object';
export const DB_STAT = 'object_database_stat';

/** Counters of the `object` category written from any thread. */
export const ObjectCounter = {
  outstandingFetch: 'outstanding_fetch_query',
  outstandingUpdate: 'outstanding_update_query',
  reruns: 'event_reruns',
  failedAfterReruns: 'events_failed_after_reruns',
  committedAfterThreadEnd: 'commits_after_thread_end',
  /** Counted by the addon (binding/in_call_answers.cc). */
  nativeCachedReads: 'native_cached_reads',
  nativeCachedWrites: 'native_cached_writes',
} as const;

/** Per-database counters (`object_database_stat/<db>/<name>`). */
export const DbCounter = {
  groups: 'commit_groups',
  committed: 'committed_events',
  conflicted: 'conflicted_events',
  failed: 'failed_events',
  groupSizeMax: 'group_size_max',
  commitTimeTotal: 'commit_time_total_in_sec',
  commitTimeMax: 'commit_latency_max_in_sec',
  fetchQueries: 'fetch_queries',
  fetchTimeTotal: 'fetch_time_total_in_sec',
  fetchTimeMax: 'fetch_latency_max_in_sec',
  slowQueries: 'slow_queries',
} as const;

/** Creates the stored counters at start, with their types (doubles for times). */
export function defineStoredCounters(db: string): void {
  const ints: Array<[string, string, string]> = [
    [OBJECT, ObjectCounter.outstandingFetch, 'Object reads waiting on the database (monitored)'],
    [OBJECT, ObjectCounter.outstandingUpdate, 'Object commits waiting for the writer (monitored)'],
    [OBJECT, ObjectCounter.reruns, 'Events run again because objects they used changed meanwhile'],
    [OBJECT, ObjectCounter.failedAfterReruns, 'Events that still conflicted after max_event_reruns and failed'],
    [OBJECT, ObjectCounter.committedAfterThreadEnd, 'Commits that went through while their event thread ended (what the events held besides was lost)'],
    [OBJECT, ObjectCounter.nativeCachedReads, 'Object reads of native handlers the cache answered inside the native call'],
    [OBJECT, ObjectCounter.nativeCachedWrites, 'Object fetches for write of native handlers the cache answered inside the native call'],
    [DB_STAT, `${db}/${DbCounter.groups}`, 'Database transactions the writer committed'],
    [DB_STAT, `${db}/${DbCounter.committed}`, 'Events whose changes were committed'],
    [DB_STAT, `${db}/${DbCounter.conflicted}`, 'Events whose commit found a changed object (nothing applied)'],
    [DB_STAT, `${db}/${DbCounter.failed}`, 'Events whose commit failed with a database error'],
    [DB_STAT, `${db}/${DbCounter.groupSizeMax}`, 'Most events in one database transaction'],
    [DB_STAT, `${db}/${DbCounter.fetchQueries}`, 'Reads of objects the cache did not hold'],
    [DB_STAT, `${db}/${DbCounter.slowQueries}`, 'Queries slower than warning_threshold_slow_query_in_sec'],
  ];
  for (const [category, name, description] of ints) {
    if (native.counterGet(category, name) === null) native.counterUpdate(category, name, 0, false, description);
  }
  const doubles: Array<[string, string]> = [
    [`${db}/${DbCounter.commitTimeTotal}`, 'Time spent committing groups (seconds)'],
    [`${db}/${DbCounter.commitTimeMax}`, 'Longest group commit (seconds)'],
    [`${db}/${DbCounter.fetchTimeTotal}`, 'Time spent reading objects the cache did not hold (seconds)'],
    [`${db}/${DbCounter.fetchTimeMax}`, 'Longest object read (seconds)'],
  ];
  for (const [name, description] of doubles) {
    if (native.counterGet(DB_STAT, name) === null) native.counterUpdate(DB_STAT, name, 0, true, description);
  }
}

/** The writer's figures. */
export class GroupStats {
  private maxGroup = 0;
  private maxSec = 0;

  constructor(private readonly db: string) {}

  /** Requests waiting for the writer. */
  queued(count: number): void {
    native.counterUpdate(OBJECT, ObjectCounter.outstandingUpdate, count, false);
  }

  group(size: number, seconds: number, outcomes: readonly Outcome[], stillQueued: number, slow = false): void {
    const db = this.db;
    let ok = 0;
    let conflicted = 0;
    for (const o of outcomes) {
      if (o.status === Status.ok) ok++;
      else if (o.status === Status.conflict) conflicted++;
    }
    native.counterIncrease(DB_STAT, `${db}/${DbCounter.groups}`, 1);
    if (ok) native.counterIncrease(DB_STAT, `${db}/${DbCounter.committed}`, ok);
    if (conflicted) native.counterIncrease(DB_STAT, `${db}/${DbCounter.conflicted}`, conflicted);
    if (ok + conflicted < size) native.counterIncrease(DB_STAT, `${db}/${DbCounter.failed}`, size - ok - conflicted);
    native.counterIncrease(DB_STAT, `${db}/${DbCounter.commitTimeTotal}`, seconds);
    if (size > this.maxGroup) native.counterUpdate(DB_STAT, `${db}/${DbCounter.groupSizeMax}`, this.maxGroup = size, false);
    if (seconds > this.maxSec) native.counterUpdate(DB_STAT, `${db}/${DbCounter.commitTimeMax}`, this.maxSec = seconds, true);
    if (slow) native.counterIncrease(DB_STAT, `${db}/${DbCounter.slowQueries}`, 1);
    this.queued(stillQueued);
  }
}

/** Records one cache-miss read (any thread). */
export function recordFetch(db: string, seconds: number, slow: boolean): void {
  native.counterIncrease(DB_STAT, `${db}/${DbCounter.fetchQueries}`, 1);
  native.counterIncrease(DB_STAT, `${db}/${DbCounter.fetchTimeTotal}`, seconds);
  const max = native.counterValue(DB_STAT, `${db}/${DbCounter.fetchTimeMax}`) ?? 0;
  if (seconds > max) native.counterUpdate(DB_STAT, `${db}/${DbCounter.fetchTimeMax}`, seconds, true);
  if (slow) native.counterIncrease(DB_STAT, `${db}/${DbCounter.slowQueries}`, 1);
}
