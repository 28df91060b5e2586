/**
 * An event worker's thread around its serve loop (`serve.ts`), none of it per event: the
 * start-up (the thread context with every plugin loaded, through `WorkerInit.contextModule`;
 * the worker's slot and progress cell, its idle waiter, event lines and awaiting events; what
 * the runtime calls back: a renamed event, a timed-out one, an unhandled rejection), the
 * flags' re-read when the configuration changed (once per loop turn), and the thread's end
 * when the loop itself fails.
 */
import { createRequire } from 'node:module';
import { threadId } from 'node:worker_threads';
import { native, PROGRESS_STRIDE, ProgressField } from '../../native.ts';
import type { ThreadContext } from '../../hooks/thread-context.ts';
import { describeError } from '../../errors.ts';
import type { ArgValue } from '../../config/manifest.ts';
import type { RunningEvent } from '../runtime.ts';
import { AwaitingEvents } from './awaiting.ts';
import { IdleWaiter } from './idle.ts';
import { EventLines } from './lines.ts';
import type { WorkerContextModule, WorkerEffects, WorkerInit } from '../types.ts';

// Local copies: module exports are getters under the CommonJS transform workers load with.
const P_NAME = ProgressField.nameId;
const core = native;

/** This worker's thread context, once set up. */
let current: ThreadContext | undefined;

/** What the serve loop runs with, once the worker is set up. */
export interface ServeThread {
  readonly thread: ThreadContext;
  readonly effects: WorkerEffects | null;
  readonly slot: number;
  /** This worker's start in the progress cells. */
  readonly cell: number;
  readonly idle: IdleWaiter;
  /** The failure, slow-event and unknown-event lines (slow_event_log_threshold_in_ms re-read with the flags). */
  readonly lines: EventLines;
  /** Events of this worker that await. */
  readonly awaiting: AwaitingEvents;
  /** Re-reads the flags if the configuration changed since the last call. */
  readonly refreshFlags: () => void;
}

/**
 * Builds this worker's thread context (through `require`: on Node 20 the TypeScript loader's
 * CommonJS hook reaches worker threads) and sets the worker up. `progress`: the progress cells,
 * where a renamed running event's name goes; `finished`: hears each awaiting event finish.
 */
export function setUpWorker(init: WorkerInit, progress: Int32Array, finished: (failed: boolean) => void): Promise<ServeThread> {
  const { createThreadContext } = createRequire(import.meta.url)(init.contextModule) as WorkerContextModule;
  return createThreadContext(init.manifest, 'worker', init.pluginFiles).then((thread) => {
    current = thread;
    const { runtime, flags, log } = thread;
    const effects = runtime.effects;
    const slot = core.slotRegister(threadId);
    const cell = slot * PROGRESS_STRIDE;
    const idle = new IdleWaiter(slot);
    const lines = new EventLines(log);
    const awaiting = new AwaitingEvents(slot, runtime, lines, finished);
    // A renamed event's name goes where the watchdog reads it (the progress cell, or the parked record).
    runtime.onRename = (ev: RunningEvent): void => {
      if (ev.parked) core.renameParked(ev.id, ev.nameId);
      else if (runtime.running === ev) progress[cell + P_NAME] = ev.nameId;
    };
    runtime.noticeTimeouts = () => awaiting.letGoOfTimedOut();
    process.on('unhandledRejection', (reason) => {
      log.error(`unhandled rejection in an event worker: ${describeError(reason)}`);
    });
    let configVersion = -1;
    const refreshFlags = (): void => {
      const version = core.configVersion();
      if (version === configVersion) return;
      configVersion = version;
      flags.load(JSON.parse(core.configGet()) as Record<string, ArgValue>);
      lines.slowMs = flags.get<number>('slow_event_log_threshold_in_ms');
    };
    flags.follow(init.configStamp, refreshFlags);
    return { thread, effects, slot, cell, idle, lines, awaiting, refreshFlags };
  });
}

/** This worker's thread context (tests of worker internals). */
export function workerThread(): ThreadContext {
  return current!;
}

/**
 * A fault of the serve loop itself (never a handler's: those are caught per event) leaves a
 * claim half done: ending this thread hands its unstarted events back to the queue, and what its
 * finished events produced is still delivered (see WorkerEndHooks).
 */
export function workerFailed(log: ThreadContext['log'], err: unknown): never {
  log.error(`GSF_ERR_INTERNAL: event worker ${threadId} failed and is replaced: ${describeError(err)}`,
    { stack: err instanceof Error ? err.stack : undefined });
  process.exit(1);
}
