/**
 * The pools of event workers behind the main-thread `Dispatcher` (dispatcher.ts extends
 * `WorkerPools`): how a pool's workers start, its warm-up, and its live replacement (resize,
 * and plugin reload: the same swap with workers that load new code), the old pool serving until
 * the new one has loaded and retired once its claims and awaiting events are done.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Piscina } from 'piscina';
import { native } from '../../native.ts';
import { describeError, gsfError } from '../../errors.ts';
import type { ThreadContext } from '../../hooks/thread-context.ts';
import { abortable, deadline } from '../abortable.ts';
import { nextEpoch, workReady } from '../wake.ts';
import type { ServeTask, WorkerInit, WorkerMessage } from '../types.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKER_FILE = path.join(here, '..', 'worker', 'serve.ts');

/**
 * execArgv for workers: ours, plus tsx's require hook if the main thread got tsx another way
 * (the `gsf` command registers it from code). Workers load gsf with require: on Node 20 tsx's
 * ES module hooks do not reach worker threads, and a worker that registers them anyway starts
 * slower (`npm start` with four event threads: 1.93 CPU-s against 1.72).
 */
export function workerExecArgv(): string[] {
  const argv = [...process.execArgv];
  if (!argv.some((a) => a.includes('tsx'))) argv.push('--require', createRequire(import.meta.url).resolve('tsx/cjs'));
  return argv;
}

/** A running serve task: its abort, and the pool it runs on. */
export interface TaskEntry {
  abort: AbortController;
  pool: Piscina;
}

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

/**
 * A dispatcher's pools of event workers: the running one, a replacement while it loads, and
 * old ones retiring. Serving on a pool (`serve`) and what a worker's end or message means are
 * the dispatcher's.
 */
export abstract class WorkerPools {
  protected pool: Piscina | null = null;
  protected readonly retiring = new Set<Piscina>();
  /** Pools ended for good (closed, retired, or a failed replacement). */
  private readonly ended = new WeakSet<Piscina>();
  /** A replacement pool while its workers load (ended by `close`). */
  protected warming: Piscina | null = null;
  /** Pool replacements run one at a time, in call order. */
  private replacing: Promise<unknown> = Promise.resolve();
  /** The size asked for (a resize sets it at once); `poolThreads` is the running pool's. */
  protected threads: number;
  private poolThreads: number;
  /** The resize that will act (later ones replace it), and when its pool serves. */
  private pendingResize: { threads: number; done: Promise<void> } | null = null;
  protected epoch = 0;
  protected readonly tasks = new Map<number, TaskEntry>();
  /** Set by the dispatcher's `close`: no replacement starts or completes from then on. */
  protected closing = false;
  /**
   * Throws when the plugin files new workers would read are not the running version's (a
   * save not reloaded yet): a resize's new workers load the plugins from disk.
   */
  sourceCheck: (() => void) | null = null;

  constructor(protected readonly thread: ThreadContext, protected init: WorkerInit) {
    this.threads = thread.flags.get<number>('event_threads_size');
    this.poolThreads = this.threads;
  }

  /** What the running pool's workers load (a reload builds the next one from it). */
  get workerInit(): WorkerInit {
    return this.init;
  }

  /** Resolves when every worker of `pool` has loaded its plugins. */
  protected async warmUp(pool: Piscina, threads: number): Promise<void> {
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

  /** Current number of event threads: the serving pool's (a resize under way changes it once its threads serve). */
  get size(): number {
    return this.poolThreads;
  }

  /** Ends a pool for good (see the pool's error handler). */
  protected endPool(pool: Piscina): Promise<void> {
    this.ended.add(pool);
    return pool.destroy();
  }

  /** The pools' workers by the thread id they had when created (`workerDestroy` may see -1). */
  private readonly liveWorkers = new Map<number, { id: number }>();

  /** A worker of the pools by its thread id: its `id` reads -1 once its thread has exited. */
  protected workerOf(threadId: number): { readonly id: number } | undefined {
    return this.liveWorkers.get(threadId);
  }

  protected createPool(threads: number, init: WorkerInit): Piscina {
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
    // A worker that exited on its own (a handler calling process.exit, a fatal error) reports
    // thread id -1 by then: its id is the one noted at its creation whose worker now reads -1.
    pool.on('workerCreate', (worker: { id: number }) => this.liveWorkers.set(worker.id, worker));
    pool.on('workerDestroy', (worker: { id: number }) => {
      if (worker.id >= 0) {
        this.liveWorkers.delete(worker.id);
        this.released(worker.id);
        return;
      }
      for (const [threadId, w] of this.liveWorkers) {
        if (w.id >= 0) continue;
        this.liveWorkers.delete(threadId);
        this.released(threadId);
      }
    });
    pool.on('error', (err: unknown) => {
      // piscina's destroy is not final: a worker of a destroyed pool that exits or fails makes
      // it start another (which, its plugins gone, fails again, forever). End it at once.
      if (this.ended.has(pool)) void pool.destroy().catch(() => undefined);
      else this.thread.log.error(`event worker error: ${describeError(err)}`);
    });
    pool.on('message', (message: WorkerMessage) => this.onWorkerMessage(message));
    return pool;
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
        this.sourceCheck?.();
        let swapped: PoolSwap;
        try {
          // Checked again once they loaded: a save while they did would go unnoticed.
          swapped = await this.replacePool(threads, this.init, { beforeSwap: () => this.sourceCheck?.() }, limit.signal);
        } finally {
          limit.clear();
        }
        resolve();
        // The old pool ends once its awaiting events do, outside this section: a later resize
        // or reload does not wait for that (an event may await for minutes).
        swapped.drained.catch((err: unknown) => this.thread.log.error(`retiring the old event threads failed: ${describeError(err)}`));
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

  // The dispatcher's part (dispatcher.ts): serving on a pool, a worker's end and its messages.
  /** Keeps one serve task running on `pool` while the epoch lasts; a task that ends is replaced. */
  protected abstract serve(pool: Piscina, epoch: number): void;
  /** A worker thread is gone: its claim goes back to the queue, its awaiting events are abandoned. */
  protected abstract released(threadId: number): void;
  /** A message a worker posted (a channel it opens). */
  protected abstract onWorkerMessage(message: WorkerMessage): void;
}
