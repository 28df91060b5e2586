/**
 * Commits of events whose event thread is gone (it exited, or was ended for a timeout): those
 * events were abandoned and their clients told so, and what they held (counter changes,
 * invokes, replies) went with the thread. The writer leaves such a commit out while it still
 * can, and logs and counts one the database was already applying (`object/commits_after_thread_end`).
 * It hears of a thread's end only when its loop runs; the queue's slots tell at once.
 */
import type { BroadcastChannel } from 'node:worker_threads';
import { native } from '../../native.ts';
import type { Logger } from '../../log/logger.ts';
import { LEFT_OUT, Status, type CommitRequest, type Outcome } from '../storage.ts';
import { ObjectCounter } from '../stats.ts';

/** Channels of event threads, with their thread ids. */
const eventThreads = new WeakMap<BroadcastChannel, number>();

/** Notes that `channel` (of thread `thread`) is an event thread's, if that thread holds a queue slot now. */
export function noteChannelThread(channel: BroadcastChannel, thread: number): void {
  if (!eventThreads.has(channel) && thread > 0 && native.threadHasSlot(thread)) eventThreads.set(channel, thread);
}

/** Whether the event thread of `channel` is gone. */
export function threadGone(channel: BroadcastChannel): boolean {
  const thread = eventThreads.get(channel);
  return thread !== undefined && !native.threadHasSlot(thread);
}

/** Logs (and counts) what a group did with commits of gone threads: left out, or made all the same. */
export function noteOrphanedCommits(log: Logger, group: ReadonlyArray<{ request: CommitRequest; channel: BroadcastChannel }>,
  outcomes: readonly Outcome[]): void {
  const left = outcomes.filter((o) => o === LEFT_OUT).length;
  if (left > 0) log.vlog(1, `object writer: ${left} commit(s) left out of their group: their event thread ended while they waited`);
  group.forEach((p, i) => {
    if (p.request.ops.length === 0 || outcomes[i]!.status !== Status.ok || !threadGone(p.channel)) return;
    native.counterIncrease('object', ObjectCounter.committedAfterThreadEnd, 1);
    log.warn(`object writer: the commit of event ${p.request.owner} went through after its event thread ended: ` +
      'its object changes stand; the counter changes, invokes and replies it held were lost with the thread');
  });
}
