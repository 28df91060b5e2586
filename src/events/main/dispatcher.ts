/**
 * The main-thread side of the event system: owns the piscina pool of event workers, keeps one
 * serve task running on each, fires timers, routes the channels workers open to the features
 * that listen for them, and replaces the pool live (resize, and plugin reload: the same swap
 * with workers that load new code).
 *
 * Events never travel through piscina: workers claim them from the native queue themselves
 * and wake one another through shared memory (`wake.ts`), so a task is only "serve". That
 * lets a pool be replaced while events flow without losing, repeating or reordering any.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Piscina } from 'piscina';
import { native } from '../../native.ts';
import { describeError, gsfError } from '../../errors.ts';
import type { ThreadContext } from '../../hooks/thread-context.ts';
import { abortable, deadline } from '../abortable.ts';
import { currentEpoch, nextEpoch, stopAllEpochs, workReady } from '../wake.ts';
import type {
  ChannelHello, ChannelName, ServeTask, WorkerEndHooks, WorkerInit, WorkerMessage,
} from '../types.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKER_FILE = path.join(here, '..', 'worker', 'serve.ts');

/** execArgv for workers: ours, plus the TypeScript loader if the main thread got it another way. */
export function workerExecArgv(): string[] {
  const argv = [...process.execArgv];
  if (!argv.some((a) => a.includes('tsx'))) {
    const loader = createRequire(import.meta.url).resolve('tsx');
    argv.push('--import', new URL(`file://${loader}`).href);
  }
  return argv;
}

interface TaskEntry {
  abort: AbortController;
  pool: Piscina;
}

/** How long `close` waits for serve tasks to end before it ends their threads. */
const CLOSE_WAIT_MS = 2000;
/** How long `close` waits for threads to end (one stuck in native code never does). */
const DESTROY_WAIT_MS = 3000;
/** How long a thread ended for a timeout may take to exit before it counts as abandoned. */
const ABANDON_AFTER_MS = 5000;

/** What a pool replacement runs around its switch (see `replacePool`). */
export interface SwapHooks {
  /** Every new worker has loaded; the old ones still serve. A throw aborts the replacement. */
  beforeSwap?(): void | Promise<void>;
  /**
   * At the switch, synchronously, after the old workers were told to take nothing new and
   * before the new ones serve: the main thread's view of the plugins changes here.
   */
  swap?(): void;
  /** The replacement's turn came (replacements run one at a time): its workers start now. */
  started?(): void;
}

/** How a pool replacement went, in ms from its start. */
export interface PoolSwap {
  /** Until every new worker had loaded its plugins. */
  loadMs: number;
  /** Until the new workers served. */
  swapMs: number;
  /** Resolves once the old workers finished the claims and awaiting events they held and were ended. */
  drained: Promise<number>;
}

export class Dispatcher {
  private pool: Piscina | null = null;
  private readonly retiring = new Set<Piscina>();
  /** Pools ended for good (closed, retired, or a failed replacement). */
  private readonly ended = new WeakSet<Piscina>();
  /** A replacement pool while its workers load (ended by `close`). */
  private warming: Piscina | null = null;
  /** Pool replacements run one at a time, in call order. */
  private replacing: Promise<unknown> = Promise.resolve();
  /** The size asked for (a resize sets it at once); `poolThreads` is the running pool's. */
  private threads: number;
  private poolThreads: number;
  /** The resize that will act (later ones replace it), and when its pool serves. */
  private pendingResize: { threads: number; done: Promise<void> } | null = null;
  private epoch = 0;
  private readonly tasks = new Map<number, TaskEntry>();
  private nextTaskId = 1;
  private timerHandle: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private timersRunning = true;
  private closing = false;
  private readonly channels = new Map<ChannelName, (hello: ChannelHello) => void>();
  /** Channels opened before their feature started listening (workers load before features start). */
  private readonly waitingChannels: ChannelHello[] = [];
  private readonly endHooks = new Set<WorkerEndHooks>();
  /** Threads ended for a timeout that have not exited yet. */
  private readonly ending = new Set<number>();
  /**
   * Totals since start, for diagnostics and tests: serve tasks started, events that ran and
   * failed (counted by the workers as they go, in `engine/events_run` and `engine/events_failed`),
   * awaiting events abandoned.
   */
  readonly totals = {
    tasks: 0,
    abandoned: 0,
    get ran(): number { return native.counterValue('engine', 'events_run') ?? 0; },
    get failed(): number { return native.counterValue('engine', 'events_failed') ?? 0; },
  };

  constructor(private readonly thread: ThreadContext, private init: WorkerInit) {
    this.threads = thread.flags.get<number>('event_threads_size');
    this.poolThreads = this.threads;
  }

  /** What the running pool's workers load (a reload builds the next one from it). */
  get workerInit(): WorkerInit {
    return this.init;
  }

  /** Starts the pool, waits until every worker has loaded, and starts serving. */
  async start(): Promise<void> {
    native.counterUpdate('engine', 'events_awaiting', 0, false, 'Events whose handler awaits now (they hold their tag, not a thread)');
    native.counterUpdate('engine', 'events_awaiting_peak', 0, false, 'Most events awaiting at once since start');
    native.counterUpdate('engine', 'events_abandoned', 0, false, 'Awaiting events that never finished: their event thread was ended');
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

  /** Resolves when every worker of `pool` has loaded its plugins. */
  private async warmUp(pool: Piscina, threads: number): Promise<void> {
    await new Promise<void>((resolve) => {
      let ready = 0;
      const onCreate = (): void => {
        if (++ready < threads) return;
        pool.off('workerCreate', onCreate);
        resolve();
      };
      pool.on('workerCreate', onCreate);
    });
    // One warm-up task per worker (all are idle, so each gets one) waits for plugin loading.
    const warmup: ServeTask = { taskId: 0, epoch: this.epoch, maxBatch: 1, budgetMs: 0, maxAwaiting: 0, warmup: true };
    await Promise.all(Array.from({ length: threads }, () => pool.run(warmup)));
  }

  /** How long new workers may take to load (EventDispatcher.plugin_reload_timeout_in_ms, read at each use). */
  get loadTimeoutMs(): number {
    return this.thread.flags.get<number>('plugin_reload_timeout_in_ms');
  }

  /** Current number of event threads. */
  get size(): number {
    return this.threads;
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
    this.tasks.get(taskId)?.abort.abort();
    native.counterIncrease('engine', 'event_threads_ended', 1);
    this.ending.add(threadId);
    setTimeout(() => {
      if (!this.ending.delete(threadId)) return;
      native.counterIncrease('engine', 'event_threads_abandoned', 1);
      this.thread.log.error(`event thread ${threadId} did not end ${ABANDON_AFTER_MS} ms after its event timed out ` +
        '(stuck in native code?): abandoned; a new event thread serves in its place');
    }, ABANDON_AFTER_MS).unref();
  }

  /** Routes the channel a worker opens under `name` to `listener` (one listener per name). */
  onChannel(name: ChannelName, listener: ((hello: ChannelHello) => void) | null): void {
    if (listener === null) {
      this.channels.delete(name);
      return;
    }
    this.channels.set(name, listener);
    for (const hello of this.waitingChannels.filter((h) => h.channel === name)) {
      this.waitingChannels.splice(this.waitingChannels.indexOf(hello), 1);
      listener(hello);
    }
  }

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

  /** Ends a pool for good (see the pool's error handler). */
  private endPool(pool: Piscina): Promise<void> {
    this.ended.add(pool);
    return pool.destroy();
  }

  private createPool(threads: number, init: WorkerInit): Piscina {
    // A young generation larger than V8's default (16 MiB semi-spaces on 64-bit) lets an event
    // thread's per-event garbage die between scavenges instead of waking V8's helper threads:
    // about 5 µs of CPU per console request on them before.
    const youngMb = this.thread.manifest.components.EventDispatcher!.event_thread_young_generation_in_mb as number;
    const pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.MAX_SAFE_INTEGER,
      concurrentTasksPerWorker: 1,
      // A serve loop awaits (awaiting events, sleeps): the worker's event loop must keep running.
      atomics: 'disabled',
      execArgv: workerExecArgv(),
      ...(youngMb > 0 ? { resourceLimits: { maxYoungGenerationSizeMb: youngMb } } : {}),
      workerData: init,
    });
    pool.on('workerDestroy', (worker: { id: number }) => this.released(worker.id));
    pool.on('error', (err: unknown) => {
      // piscina's destroy is not final: a worker of a destroyed pool that exits or fails makes
      // it start another (which, its plugins gone, fails again, forever). End it at once.
      if (this.ended.has(pool)) void pool.destroy().catch(() => undefined);
      else this.thread.log.error(`event worker error: ${describeError(err)}`);
    });
    pool.on('message', (message: WorkerMessage) => this.onWorkerMessage(message));
    return pool;
  }

  private onWorkerMessage(message: WorkerMessage): void {
    switch (message.type) {
      case 'channel': {
        const listener = this.channels.get(message.channel);
        if (listener) listener(message);
        else this.waitingChannels.push(message);
        break;
      }
    }
  }

  /** A worker thread is gone: its claim goes back to the queue, its awaiting events are abandoned. */
  private released(threadId: number): void {
    this.ending.delete(threadId);
    const result = this.endWorker(threadId, () => native.slotReleaseThread(threadId), (r) => r.requeued >= 0);
    this.reportAbandoned(result.abandoned);
    if (result.requeued > 0 || result.abandoned.length > 0) workReady();
  }

  /** Logs events that awaited on a worker that was ended: they never finish. */
  reportAbandoned(abandoned: ReadonlyArray<{ id: number; tag: number; nameId: number }>): void {
    for (const a of abandoned) {
      this.totals.abandoned++;
      native.counterIncrease('engine', 'events_abandoned', 1);
      native.counterIncrease('engine', 'events_awaiting', -1);
      const err = gsfError('GSF_ERR_EVENT_ABANDONED', native.nameOf(a.nameId), a.id, a.tag);
      this.thread.log.error(`${err.code}: ${err.message}`);
    }
  }

  /** Keeps one serve task running on `pool` while the epoch lasts; a task that ends is replaced. */
  private serve(pool: Piscina, epoch: number): void {
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
    if (nextMs >= 0) this.scheduleTimers(nextMs);
    native.armWake();
  }

  private scheduleTimers(nextMs: number): void {
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

  /**
   * Replaces the pool with one of `threads` workers. The old workers finish the claims and
   * awaiting events they hold, take nothing new, and are then destroyed; queued events stay in
   * the native queue for the new workers, so nothing is lost, repeated or reordered.
   *
   * Resolves once the new workers serve (a resize asked for meanwhile: once that one's do),
   * and rejects when the pool could not be replaced (its workers did not load within
   * `loadTimeoutMs`, or the server stops): the running pool and `size` stay as they were.
   */
  resize(threads: number): Promise<void> {
    if (this.pool === null) return Promise.resolve();
    if (threads === this.threads) return this.pendingResize?.threads === threads ? this.pendingResize.done : Promise.resolve();
    this.threads = threads;
    let resolve!: (value: void | Promise<void>) => void;
    let reject!: (err: unknown) => void;
    const done = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
    const request = { threads, done };
    this.pendingResize = request;
    void this.exclusive(async () => {
      try {
        // A later resize is queued behind this one: it alone acts, and this one ends with it.
        if (this.pendingResize !== request && this.pendingResize !== null) return resolve(this.pendingResize.done);
        if (this.pool === null || this.closing) throw gsfError('GSF_ERR_SHUTTING_DOWN', 'an event thread resize');
        if (threads === this.poolThreads) return resolve();
        const ms = this.loadTimeoutMs;
        const limit = deadline(ms, () => new Error(`the ${threads} new event threads did not all load the plugins within `
          + `${ms} ms (EventDispatcher.plugin_reload_timeout_in_ms)`));
        let swapped: PoolSwap;
        try {
          swapped = await this.replacePool(threads, this.init, {}, limit.signal);
        } finally {
          limit.clear();
        }
        resolve();
        await swapped.drained;
      } catch (err) {
        if (this.threads === threads) this.threads = this.poolThreads;
        reject(err);
      } finally {
        if (this.pendingResize === request) this.pendingResize = null;
      }
    });
    return done;
  }

  /**
   * Replaces the pool with workers that load `init` (new plugin code): the swap of a resize,
   * done only once every new worker has loaded. A worker that fails to load, or `signal`
   * aborting before the switch (the reload's deadline), rejects the reload; the new pool is
   * destroyed and the old one serves on as if nothing happened.
   */
  reload(init: WorkerInit, hooks: SwapHooks, signal?: AbortSignal): Promise<PoolSwap> {
    return this.exclusive(() => {
      if (this.pool === null || this.closing) throw gsfError('GSF_ERR_SHUTTING_DOWN', 'a plugin reload');
      if (signal?.aborted === true) throw signal.reason as Error;
      hooks.started?.();
      return this.replacePool(this.threads, init, hooks, signal);
    });
  }

  /** Runs pool replacements one at a time, in call order. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.replacing.then(fn, fn);
    this.replacing = run.catch(() => undefined);
    return run;
  }

  private async replacePool(threads: number, init: WorkerInit, hooks: SwapHooks, signal?: AbortSignal): Promise<PoolSwap> {
    const started = performance.now();
    const old = this.pool!;
    const pool = this.createPool(threads, init);
    this.warming = pool;
    try {
      // The old workers serve until the new ones have loaded: no gap in service.
      await abortable(this.warmUp(pool, threads), signal);
      if (!this.closing) await abortable(Promise.resolve(hooks.beforeSwap?.()), signal);
      if (this.closing) throw gsfError('GSF_ERR_SHUTTING_DOWN', 'replacing the event threads');
    } catch (err) {
      // close() may have ended it already.
      await this.endPool(pool).catch(() => undefined);
      throw this.closing ? gsfError('GSF_ERR_SHUTTING_DOWN', 'replacing the event threads') : err;
    } finally {
      this.warming = null;
    }
    const loadMs = performance.now() - started;
    // The switch, synchronously. Retired slots get nothing more from the queue, so no old
    // worker starts an event queued for the new ones, even one that has not yet seen the
    // new epoch; what the old ones claimed before runs there to its end.
    for (const worker of old.threads) native.slotRetireThread(worker.threadId);
    this.epoch = nextEpoch();
    this.pool = pool;
    this.init = init;
    this.poolThreads = threads;
    this.retiring.add(old);
    try {
      hooks.swap?.();
    } finally {
      for (let i = 0; i < threads; i++) this.serve(pool, this.epoch);
      workReady();
    }
    const swapMs = performance.now() - started;
    return { loadMs, swapMs, drained: this.retire(old).then(() => performance.now() - started) };
  }

  /** Waits for an old pool's serve tasks to end (their claims and awaiting events), then ends its threads. */
  private async retire(old: Piscina): Promise<void> {
    // Not piscina's close(): it can end a worker whose task is still running, which would
    // drop the event that worker had begun. Serve tasks of an old epoch end by themselves.
    while (!this.closing && [...this.tasks.values()].some((t) => t.pool === old)) await new Promise((r) => setTimeout(r, 5));
    if (this.closing) return; // close() ends it with the other pools
    await this.endPool(old);
    this.retiring.delete(old);
  }

  /** Stops firing timers (shutdown). */
  stopTimers(): void {
    this.timersRunning = false;
    if (this.timerHandle !== null) clearTimeout(this.timerHandle);
    this.timerHandle = null;
  }

  /** True when nothing is queued, claimed, running or awaiting. */
  idle(): boolean {
    const s = native.queueStats();
    return s.waiting === 0 && s.outstanding === 0;
  }

  /** Ends every serve loop and closes every worker. Queued events that did not run are reported by the caller. */
  async close(): Promise<void> {
    this.closing = true;
    this.stopTimers();
    native.setWakeCallback(null);
    stopAllEpochs();
    // A worker stuck in a handler never returns: its thread is ended with the pool.
    const deadline = Date.now() + CLOSE_WAIT_MS;
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
