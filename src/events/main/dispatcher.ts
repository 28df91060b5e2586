/**
 * The main-thread side of the event system: owns the piscina pool of event workers, keeps one
 * serve task running on each, fires timers, routes the channels workers open to the features
 * that listen for them, and replaces the pool live (resize, and plugin reload: the same swap
 * with workers that load new code; the pools and their replacement are `WorkerPools`, in
 * worker-pools.ts, which `Dispatcher` extends).
 *
 * Events never travel through piscina: workers claim them from the native queue themselves
 * and wake one another through shared memory (`wake.ts`), so a task is only "serve". That
 * lets a pool be replaced while events flow without losing, repeating or reordering any.
 */
import type { Piscina } from 'piscina';
import { native } from '../../native.ts';
import type { CancelledEvent } from '../../native.ts';
import { describeError, gsfError } from '../../errors.ts';
import { awaitedAnswers, currentEpoch, nextEpoch, stopAllEpochs, workReady } from '../wake.ts';
import type { ChannelHello, ChannelName, ServeTask, WorkerEndHooks, WorkerMessage } from '../types.ts';
import { WorkerPools, type TaskEntry } from './worker-pools.ts';

/** The longest wait setTimeout keeps (2^31 - 1 ms). */
const MAX_TIMEOUT_MS = 0x7fffffff;

export { workerExecArgv } from './worker-pools.ts';
export type { PoolSwap, SwapHooks } from './worker-pools.ts';

/** How long `close` waits for serve tasks to end before it ends their threads. */
const CLOSE_WAIT_MS = 2000;
/** How long `close` waits for threads to end (one stuck in native code never does). */
const DESTROY_WAIT_MS = 3000;
/** How long a thread ended for a timeout may take to exit before it counts as abandoned. */
const ABANDON_AFTER_MS = 5000;
/** How often a thread ended for a timeout is looked at until it has exited. */
const EXIT_POLL_MS = 50;

/** Why an event will never finish (`Dispatcher.onEventsGone`). */
/** 'was cancelled': queued on the tag of an event that timed out, it never ran. */
export type EventGone = 'timed out' | 'was abandoned' | 'was cancelled' | 'ended with its thread';
/** Told of events that will never finish (`onEventsGone`); a timeout's and an ended worker's carry their payloads. */
export type GoneListener = (events: readonly CancelledEvent[], why: EventGone) => void;

export class Dispatcher extends WorkerPools {
  private nextTaskId = 1;
  private timerHandle: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private timersRunning = true;
  private readonly channels = new Map<ChannelName, (hello: ChannelHello) => void>();
  /** Channels opened before their feature started listening (workers load before features start). */
  private readonly waitingChannels: ChannelHello[] = [];
  /** Channels whose feature has stopped: a thread that opens one now has its port closed at once. */
  private readonly closedChannels = new Set<ChannelName>();
  private readonly endHooks = new Set<WorkerEndHooks>();
  /** Threads ended for a timeout that have not exited yet (`threadsEnding`). */
  private readonly ending = new Set<number>();
  /**
   * Totals since start, for diagnostics and tests: serve tasks started, events that ran and
   * failed (counted by the workers as they go, in `engine/events_run` and `engine/events_failed`),
   * awaiting events abandoned, events lost with a thread that exited on its own.
   */
  readonly totals = {
    tasks: 0,
    abandoned: 0,
    lost: 0,
    get ran(): number { return native.counterValue('engine', 'events_run') ?? 0; },
    get failed(): number { return native.counterValue('engine', 'events_failed') ?? 0; },
  };

  /** Starts the pool, waits until every worker has loaded, and starts serving. */
  async start(): Promise<void> {
    native.counterUpdate('engine', 'events_awaiting', 0, false, 'Events whose handler awaits now (they hold their tag, not a thread)');
    native.counterUpdate('engine', 'events_awaiting_peak', 0, false, 'Most events awaiting at once since start');
    native.counterUpdate('engine', 'events_abandoned', 0, false, 'Awaiting events that never finished: their event thread was ended');
    native.counterUpdate('engine', 'events_lost', 0, false, 'Running events that never finished: their event thread exited on its own (process.exit, a fatal error)');
    native.counterUpdate('engine', 'events_run', 0, false, 'Events whose handler ran to its end (failed ones included)');
    native.counterUpdate('engine', 'events_failed', 0, false, 'Events whose handler threw or rejected');
    native.counterUpdate('engine', 'event_threads_ended', 0, false, 'Event threads ended because an event held them past its timeout');
    native.counterUpdate('engine', 'event_threads_abandoned', 0, false, 'Ended event threads that never exited (stuck in native code)');
    native.counterUpdate('engine', 'events_unknown', 0, false,
      'Events that came to an event thread with no handler of their name (removed by a plugin reload after they were queued)');
    this.epoch = nextEpoch();
    this.pool = this.createPool(this.threads, this.init);
    native.setWakeCallback(() => this.fireTimers());
    await this.warmUp(this.pool, this.threads);
    for (let i = 0; i < this.threads; i++) this.serve(this.pool, this.epoch);
    this.fireTimers();
  }

  /** Threads ended for a timeout that have not exited yet. */
  get threadsEnding(): number {
    return this.ending.size;
  }

  /** Task entry of a running serve task. */
  task(taskId: number): TaskEntry | undefined {
    return this.tasks.get(taskId);
  }

  /**
   * Ends the thread of a serve task whose event holds it past its timeout (only ending the
   * thread stops a handler stuck in JavaScript). A thread stuck in native code cannot be
   * stopped: if it has not exited after `ABANDON_AFTER_MS` it is counted as abandoned
   * (`engine/event_threads_abandoned`) and left to run; a new worker has taken its place.
   */
  endThreadFor(taskId: number, threadId: number): void {
    // Its Worker, found before the abort destroys it: a Worker's thread id reads -1 once its
    // thread has exited (piscina tells of the destroy at once, before the thread stops).
    const worker = this.workerOf(threadId);
    this.tasks.get(taskId)?.abort.abort();
    native.counterIncrease('engine', 'event_threads_ended', 1);
    this.ending.add(threadId);
    const since = Date.now();
    const watch = setInterval(() => {
      const exited = worker === undefined || worker.id < 0;
      if (!exited && Date.now() - since < ABANDON_AFTER_MS) return;
      clearInterval(watch);
      this.ending.delete(threadId);
      if (exited) return;
      native.counterIncrease('engine', 'event_threads_abandoned', 1);
      this.thread.log.error(`event thread ${threadId} did not end ${ABANDON_AFTER_MS} ms after its event timed out ` +
        '(stuck in native code?): abandoned; a new event thread serves in its place');
    }, EXIT_POLL_MS);
    watch.unref();
  }

  /**
   * Routes the channel a worker opens under `name` to `listener` (one listener per name); null:
   * its feature stopped, and channels opened from now on are closed at once.
   */
  onChannel(name: ChannelName, listener: ((hello: ChannelHello) => void) | null): void {
    if (listener === null) {
      this.channels.delete(name);
      this.closedChannels.add(name);
      return;
    }
    this.closedChannels.delete(name);
    this.channels.set(name, listener);
    for (const hello of this.waitingChannels.filter((h) => h.channel === name)) {
      this.waitingChannels.splice(this.waitingChannels.indexOf(hello), 1);
      listener(hello);
    }
  }

  /**
   * Listens for events that will never finish: timed out (or cancelled with a timed-out event of
   * their tag, before they ran) or abandoned with their ended worker.
   */
  onEventsGone(listener: GoneListener): () => void {
    this.goneListeners.add(listener);
    return () => this.goneListeners.delete(listener);
  }

  /** Tells the listeners of `onEventsGone`. */
  eventsGone(events: readonly CancelledEvent[], why: EventGone): void {
    if (events.length === 0) return;
    for (const listener of this.goneListeners) {
      try {
        listener(events, why);
      } catch (err) {
        this.thread.log.error(`a listener of ended events failed: ${describeError(err)}`);
      }
    }
  }

  private readonly goneListeners = new Set<GoneListener>();

  /** Hooks told when a worker ends (see `WorkerEndHooks`). */
  addEndHooks(hooks: WorkerEndHooks): () => void {
    this.endHooks.add(hooks);
    return () => this.endHooks.delete(hooks);
  }

  /**
   * Runs `revoke` (which takes a worker's claim back into the queue) between the end hooks'
   * `reserve` and `recover`, so what the worker's finished events produced goes out ahead of
   * the events it gave back. `revoke` returns whether the worker is ended.
   */
  endWorker<T>(threadId: number, revoke: () => T, ended: (result: T) => boolean): T {
    const tokens = [...this.endHooks].map((h) => [h, h.reserve(threadId)] as const);
    let result: T | undefined;
    let gone = false;
    try {
      result = revoke();
      gone = ended(result);
    } finally {
      for (const [hooks, token] of tokens) hooks.recover(token, gone);
    }
    return result;
  }

  protected onWorkerMessage(message: WorkerMessage): void {
    switch (message.type) {
      case 'channel': {
        const listener = this.channels.get(message.channel);
        if (listener) listener(message);
        else if (this.closedChannels.has(message.channel)) message.port.close();
        else this.waitingChannels.push(message);
        break;
      }
    }
  }

  /** A worker thread is gone: its claim goes back to the queue, its awaiting events are abandoned. */
  protected released(threadId: number): void {
    const result = this.endWorker(threadId, () => native.slotReleaseThread(threadId), (r) => r.requeued >= 0);
    if (result.lost !== null) {
      // A thread that exited on its own (process.exit in a handler, a fatal error) mid-event.
      const lost = result.lost;
      this.totals.lost++;
      native.counterIncrease('engine', 'events_lost', 1);
      const err = gsfError('GSF_ERR_EVENT_LOST', native.nameOf(lost.nameId), lost.id, lost.tag);
      this.thread.log.error(`${err.code}: ${err.message}`);
      this.eventsGone([lost], 'ended with its thread');
    }
    this.reportAbandoned(result.abandoned);
    if (result.requeued > 0 || result.abandoned.length > 0) workReady();
  }

  /** Logs events that awaited on a worker that was ended: they never finish. */
  reportAbandoned(abandoned: readonly CancelledEvent[]): void {
    this.eventsGone(abandoned, 'was abandoned');
    for (const a of abandoned) {
      this.totals.abandoned++;
      native.counterIncrease('engine', 'events_abandoned', 1);
      native.counterIncrease('engine', 'events_awaiting', -1);
      const err = gsfError('GSF_ERR_EVENT_ABANDONED', native.nameOf(a.nameId), a.id, a.tag);
      this.thread.log.error(`${err.code}: ${err.message}`);
    }
  }

  /** Keeps one serve task running on `pool` while the epoch lasts; a task that ends is replaced. */
  protected serve(pool: Piscina, epoch: number): void {
    const taskId = this.nextTaskId++;
    const abort = new AbortController();
    const args = this.thread.manifest.components.EventDispatcher!;
    const task: ServeTask = {
      taskId,
      epoch,
      maxBatch: args.event_batch_size as number,
      budgetMs: args.event_task_budget_in_ms as number,
      maxAwaiting: args.max_awaiting_events_per_thread as number,
    };
    this.tasks.set(taskId, { abort, pool });
    this.totals.tasks++;
    let broken = false;
    pool.run(task, { signal: abort.signal }).then(
      () => undefined,
      (err: unknown) => {
        if (abort.signal.aborted || this.closing) return;
        broken = true;
        this.thread.log.error(`event worker task failed: ${describeError(err)}`);
      },
    ).finally(() => {
      this.tasks.delete(taskId);
      if (this.closing || epoch !== currentEpoch()) return;
      // The worker was ended (a timed-out event) or failed: its replacement serves. A worker
      // that cannot run tasks (say, a plugin failing to load) must not make us spin.
      if (broken) setTimeout(() => { if (!this.closing && epoch === currentEpoch()) this.serve(pool, epoch); }, 100).unref();
      else this.serve(pool, epoch);
    });
  }

  /** Fires due timers onto the timer tag and schedules the next firing. */
  private fireTimers(): void {
    if (!this.timersRunning || this.pool === null) return;
    const nextMs = native.timerFire();
    workReady();
    this.noteSkippedPeriods();
    if (nextMs >= 0) this.scheduleTimers(nextMs);
    native.armWake();
  }

  /**
   * Counts (`engine/timer_periods_skipped`) and logs, at most once a minute, the periods
   * repeating timers skipped: 1000 timer events were waiting, as when a handler is slower than
   * its timer's period.
   */
  private noteSkippedPeriods(): void {
    const skipped = native.timerSkipped();
    if (skipped === this.timerSkipped) return;
    native.counterUpdate('engine', 'timer_periods_skipped', skipped, false,
      'Periods repeating timers skipped because 1000 timer events were waiting');
    const now = Date.now();
    if (now - this.skipWarnedAt >= 60_000) {
      this.thread.log.warn(`timers: ${skipped - this.skippedAtWarning} period(s) of repeating timers skipped: 1000 timer events are waiting ` +
        '(a timer handler slower than its period?); see engine/timer_periods_skipped');
      this.skipWarnedAt = now;
      this.skippedAtWarning = skipped;
    }
    this.timerSkipped = skipped;
  }

  private timerSkipped = 0;
  private skippedAtWarning = 0;
  private skipWarnedAt = -Infinity;

  private scheduleTimers(nextMs: number): void {
    // setTimeout waits at most 2^31 - 1 ms (longer fires after 1 ms): a timer further out is
    // looked at again then, and waited for in steps.
    nextMs = Math.min(nextMs, MAX_TIMEOUT_MS);
    const due = Date.now() + nextMs;
    if (this.timerHandle !== null && due >= this.timerDue) return;
    if (this.timerHandle !== null) clearTimeout(this.timerHandle);
    this.timerDue = due;
    this.timerHandle = setTimeout(() => {
      this.timerHandle = null;
      this.timerDue = Infinity;
      this.fireTimers();
    }, Math.max(1, nextMs));
  }

  /** Stops firing timers (shutdown). */
  stopTimers(): void {
    this.timersRunning = false;
    if (this.timerHandle !== null) clearTimeout(this.timerHandle);
    this.timerHandle = null;
  }

  /** True when nothing is queued, claimed, running or awaiting, and no answer that will be an event is on its way. */
  idle(): boolean {
    const s = native.queueStats();
    return s.waiting === 0 && s.outstanding === 0 && awaitedAnswers() === 0;
  }

  /**
   * Ends every serve loop and closes every worker, waiting up to `waitMs` for the serve loops to
   * end first (0: the threads end at once). Queued events that did not run are reported by the caller.
   */
  async close(waitMs = CLOSE_WAIT_MS): Promise<void> {
    this.closing = true;
    this.stopTimers();
    native.setWakeCallback(null);
    stopAllEpochs();
    // A worker stuck in a handler never returns: its thread is ended with the pool.
    const deadline = Date.now() + waitMs;
    while (this.tasks.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const pools = [this.pool, this.warming, ...this.retiring].filter((p): p is Piscina => p !== null);
    this.pool = null;
    for (const hello of this.waitingChannels.splice(0)) hello.port.close();
    // A thread stuck in native code never exits: the stop goes on without it (the process exit ends it).
    const destroyed = Promise.all(pools.map((p) => this.endPool(p))).then(() => true);
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), DESTROY_WAIT_MS).unref());
    if (!await Promise.race([destroyed, timeout])) {
      this.thread.log.error(`event threads did not end within ${DESTROY_WAIT_MS} ms (stuck in native code?): stopping without them`);
    }
  }
}
