/**
 * The main-thread side of the event system: owns the piscina pool of event workers, hands
 * them drain tasks while events are ready, fires timers, and resizes the pool live.
 *
 * Events never travel through piscina: workers claim them from the native queue themselves,
 * so a task is only "go drain". That keeps one task per many events (batching) and lets a
 * pool be replaced while events flow without losing, repeating or reordering any of them.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Piscina } from 'piscina';
import { native } from '../native.ts';
import { describeError } from '../errors.ts';
import type { ThreadHost } from '../host.ts';
import type { DrainResult, DrainTask, WorkerInit } from './types.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKER_FILE = path.join(here, 'worker.ts');

/** execArgv for workers: ours, plus the TypeScript loader if the main thread got it another way. */
export function workerExecArgv(): string[] {
  const argv = [...process.execArgv];
  if (!argv.some((a) => a.includes('tsx'))) {
    const loader = createRequire(import.meta.url).resolve('tsx');
    argv.push('--import', pathToHref(loader));
  }
  return argv;
}

function pathToHref(p: string): string {
  return new URL(`file://${p}`).href;
}

interface TaskEntry {
  abort: AbortController;
  pool: Piscina;
}

export class Dispatcher {
  private pool: Piscina | null = null;
  private readonly retiring = new Set<Piscina>();
  private threads: number;
  private inFlight = 0;
  private readonly tasks = new Map<number, TaskEntry>();
  private nextTaskId = 1;
  private timerHandle: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private timersRunning = true;
  /** Totals since start, for diagnostics and tests. */
  readonly totals = { tasks: 0, ran: 0, failed: 0 };
  /** Called with every message a worker posts on its parent port (engine side channels, e.g. session replies). */
  readonly workerMessageListeners = new Set<(message: unknown) => void>();

  constructor(private readonly host: ThreadHost, private readonly init: WorkerInit) {
    this.threads = host.flags.get<number>('event_threads_size');
  }

  /** Starts the pool, waits until every worker has loaded, and begins dispatching. */
  async start(): Promise<void> {
    this.pool = this.createPool(this.threads);
    native.setWakeCallback(() => this.pump());
    await this.workersReady(this.pool, this.threads);
    // One warm-up task per worker (all are idle, so each gets one) waits for plugin loading.
    const warmup: DrainTask = { taskId: 0, budgetMs: 0, maxBatch: 1, warmup: true };
    await Promise.all(Array.from({ length: this.threads }, () => this.pool!.run(warmup)));
    this.pump();
  }

  private workersReady(pool: Piscina, threads: number): Promise<void> {
    return new Promise((resolve) => {
      let ready = 0;
      const onCreate = (): void => {
        if (++ready < threads) return;
        pool.off('workerCreate', onCreate);
        resolve();
      };
      pool.on('workerCreate', onCreate);
    });
  }

  /** Current number of event threads. */
  get size(): number {
    return this.threads;
  }

  /** Task entry of a running drain task (the watchdog aborts timed-out ones). */
  task(taskId: number): TaskEntry | undefined {
    return this.tasks.get(taskId);
  }

  private createPool(threads: number): Piscina {
    const pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.MAX_SAFE_INTEGER,
      concurrentTasksPerWorker: 1,
      // Handlers may await I/O between tasks' events, so an idle worker's loop must keep running.
      atomics: 'disabled',
      execArgv: workerExecArgv(),
      workerData: this.init,
    });
    pool.on('workerDestroy', (worker: { id: number }) => {
      if (native.slotReleaseThread(worker.id) > 0) this.pump();
    });
    pool.on('error', (err: unknown) => this.host.log.error(`event worker error: ${describeError(err)}`));
    pool.on('message', (message: unknown) => { for (const fn of this.workerMessageListeners) fn(message); });
    return pool;
  }

  /** Fires due timers and gives idle workers a drain task while events are ready. */
  pump(): void {
    const pool = this.pool;
    if (pool === null) return;
    if (this.timersRunning) this.scheduleTimers(native.timerFire());
    // One task per ready tag at most: a task beyond that would find nothing to claim.
    let ready = native.ready();
    while (this.inFlight < this.threads && ready-- > 0) this.submit(pool);
    if (this.inFlight < this.threads) native.armWake();
  }

  private submit(pool: Piscina): void {
    const taskId = this.nextTaskId++;
    const abort = new AbortController();
    const dispatcher = this.host.manifest.components.EventDispatcher!;
    const task: DrainTask = {
      taskId,
      budgetMs: dispatcher.event_task_budget_in_ms as number,
      maxBatch: dispatcher.event_batch_size as number,
    };
    this.tasks.set(taskId, { abort, pool });
    this.inFlight++;
    this.totals.tasks++;
    let broken = false;
    pool.run(task, { signal: abort.signal }).then(
      (result: DrainResult) => {
        this.totals.ran += result.ran;
        this.totals.failed += result.failed;
      },
      (err: unknown) => {
        if (abort.signal.aborted) return;
        broken = true;
        this.host.log.error(`event worker task failed: ${describeError(err)}`);
      },
    ).finally(() => {
      this.tasks.delete(taskId);
      if (pool === this.pool) this.inFlight--;
      // A worker that cannot run tasks (say, a plugin failing to load) must not make us spin.
      if (broken) setTimeout(() => this.pump(), 100).unref();
      else this.pump();
    });
  }

  private scheduleTimers(nextMs: number): void {
    if (nextMs < 0) return;
    const due = Date.now() + nextMs;
    if (this.timerHandle !== null && due >= this.timerDue) return;
    if (this.timerHandle !== null) clearTimeout(this.timerHandle);
    this.timerDue = due;
    this.timerHandle = setTimeout(() => {
      this.timerHandle = null;
      this.timerDue = Infinity;
      this.pump();
    }, Math.max(1, nextMs));
  }

  /**
   * Replaces the pool with one of `threads` workers. The old pool finishes the drain tasks it
   * runs (their claimed events complete there), gets no new ones, and is then destroyed; queued events stay in the
   * native queue for the new workers, so nothing is lost, repeated or reordered.
   */
  async resize(threads: number): Promise<void> {
    if (this.pool === null || threads === this.threads) return;
    const old = this.pool;
    this.threads = threads;
    this.inFlight = 0;
    this.pool = this.createPool(threads);
    this.retiring.add(old);
    this.pump();
    try {
      // Not piscina's close(): it can end a worker whose task is still running, which would
      // drop the event that worker had begun. Our drain tasks end within their budget.
      while ([...this.tasks.values()].some((t) => t.pool === old)) await new Promise((r) => setTimeout(r, 5));
      await old.destroy();
    } finally {
      this.retiring.delete(old);
    }
  }

  /** Stops firing timers (shutdown). */
  stopTimers(): void {
    this.timersRunning = false;
    if (this.timerHandle !== null) clearTimeout(this.timerHandle);
    this.timerHandle = null;
  }

  /** True when nothing is queued, claimed or running. */
  idle(): boolean {
    const s = native.queueStats();
    return s.waiting === 0 && s.outstanding === 0 && this.tasks.size === 0;
  }

  /** Closes every worker. Queued events that did not run are reported by the caller. */
  async close(): Promise<void> {
    this.stopTimers();
    native.setWakeCallback(null);
    const pools = [this.pool, ...this.retiring].filter((p): p is Piscina => p !== null);
    this.pool = null;
    await Promise.all(pools.map((p) => p.destroy()));
  }
}
