/**
 * The session I/O threads as the main thread drives them (`io-sessions.ts` routes sessions over
 * them): starting each on the shared port, the batches of operations posted to each, its notes
 * read back, and the stop.
 *
 * A thread still applying its last batch gets no new one: operations wait in its writer,
 * growing, and the thread asks for them when it is done (a `drained` note), so a busy thread
 * takes fewer, larger batches instead of one message per turn of the main thread.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { workerExecArgv } from '../../events/main/dispatcher.ts';
import type { Logger } from '../../log/logger.ts';
import { IoBatchWriter } from '../io/io-batch.ts';
import { IO_CONTROL_CELLS, IoControl, type IoCommand, type IoInit, type IoNote } from '../io/io-messages.ts';

const THREAD_FILE = fileURLToPath(new URL('../io/thread.ts', import.meta.url));
const BOOT_FILE = fileURLToPath(new URL('../io/boot.mjs', import.meta.url));
/** How long a stop waits for the threads to close their sessions, and then to end. */
export const STOP_WAIT_MS = 3000;

interface IoThread {
  worker: Worker;
  notes: MessagePort;
  batch: IoBatchWriter;
  /** Resolved by its `stopped` note (or its exit). */
  stopped: Promise<void>;
  onStopped: () => void;
  /** Resolved when the thread has ended. */
  exited: Promise<void>;
  /** Shared with the thread: `IoControl` cells. */
  control: Int32Array;
  /** The thread has ended: nothing is routed to it any more. */
  ended: boolean;
}

/** What a thread's start needs besides what the pool adds (its index, notes port and control cells). */
export type IoStart = Omit<IoInit, 'entry' | 'index' | 'notes' | 'control'>;

export class IoThreadPool {
  private readonly threads: IoThread[] = [];
  private flushScheduled = false;

  /** `onNote` hears every note but `listening` and `failed`; `onExit`, a thread that ended. */
  constructor(private readonly log: Logger, private readonly onNote: (index: number, note: IoNote) => void,
    private readonly onExit: (index: number) => void) {}

  get size(): number {
    return this.threads.length;
  }

  /** Starts thread `index`; resolves once it listens. */
  start(index: number, start: IoStart): Promise<void> {
    const channel = new MessageChannel();
    const control = new Int32Array(new SharedArrayBuffer(IO_CONTROL_CELLS * 4));
    const init: IoInit = { ...start, entry: THREAD_FILE, index, notes: channel.port2, control: control.buffer as SharedArrayBuffer };
    const worker = new Worker(BOOT_FILE, { workerData: init, transferList: [channel.port2], execArgv: workerExecArgv(), name: `gsf-session-io-${index}` });
    let onStopped = (): void => undefined;
    const stopped = new Promise<void>((resolve) => { onStopped = resolve; });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const t: IoThread = { worker, notes: channel.port1, batch: new IoBatchWriter(), stopped, onStopped, exited, control, ended: false };
    this.threads[index] = t;
    const where = `${start.options.address}:${start.listenPort}`;
    return new Promise((resolve, reject) => {
      const failed = (why: string): void => reject(new Error(`SessionService: I/O thread ${index} cannot listen on ${where}: ${why}`));
      t.notes.on('message', (m: IoNote) => {
        if (m.kind === 'listening') resolve();
        else if (m.kind === 'failed') failed(m.message);
        else this.onNote(index, m);
      });
      worker.on('error', (err) => {
        this.log.error(`session I/O thread ${index} failed: ${err.stack ?? err.message}`);
        failed(err.message);
      });
      worker.on('exit', () => {
        this.onExit(index);
        // Its sessions are gone (onExit): a batch held back for it, or one to every session, is never read.
        t.ended = true;
        t.batch.take();
        t.onStopped();
        failed('the thread ended');
      });
    });
  }

  /** Notes of thread `index` waiting on its port now (they are otherwise delivered to `onNote`). */
  takeNotes(index: number): IoNote[] {
    const t = this.threads[index];
    const out: IoNote[] = [];
    if (t === undefined) return out;
    for (let m = receiveMessageOnPort(t.notes); m !== undefined; m = receiveMessageOnPort(t.notes)) out.push(m.message as IoNote);
    return out;
  }

  /** Thread `index` said it stopped. */
  stopped(index: number): void {
    this.threads[index]?.onStopped();
  }

  /** The writer of thread `index`'s next batch (posted at the end of this turn). */
  batch(index: number): IoBatchWriter {
    this.scheduleFlush();
    return this.threads[index]!.batch;
  }

  /** The writer of every thread's next batch. */
  batches(): IoBatchWriter[] {
    this.scheduleFlush();
    return this.threads.filter((t) => t !== undefined && !t.ended).map((t) => t.batch);
  }

  /** Thread `index` applied its batch and one was held back meanwhile: post it. */
  drained(index: number): void {
    const t = this.threads[index];
    if (t !== undefined && !t.batch.empty) this.postBatch(t, false);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Posts each thread its batch, held back from a busy one; `force`: to every thread now (a command follows). */
  private flush(force = false): void {
    this.flushScheduled = false;
    for (const t of this.threads) {
      if (t !== undefined && !t.batch.empty) this.postBatch(t, force);
    }
  }

  private postBatch(t: IoThread, force: boolean): void {
    if (t.ended) {
      t.batch.take();
      return;
    }
    const c = t.control;
    if (!force && Atomics.load(c, IoControl.busy) === 1) {
      // Held back; the thread reads `held` after it clears `busy`, so one of the two sees the other.
      Atomics.store(c, IoControl.held, 1);
      if (Atomics.load(c, IoControl.busy) === 1) return;
    }
    Atomics.store(c, IoControl.busy, 1);
    const buffer = t.batch.take();
    t.worker.postMessage({ kind: 'batch', buffer } satisfies IoCommand, [buffer]);
  }

  /** A command for every thread, after the operations routed so far. */
  post(command: IoCommand): void {
    this.flush(true);
    for (const t of this.threads) t?.worker.postMessage(command);
  }

  /**
   * Asks every thread to close its sessions (1001) and end; resolves once they said they
   * stopped (or STOP_WAIT_MS passed), calling `closing` then, and once they ended. A thread
   * that does not end in time is logged and left unreferenced: ending a thread that runs
   * uWebSockets.js from outside can crash the process.
   */
  async stop(closing: () => void): Promise<void> {
    this.post({ kind: 'shutdown' });
    const all = this.threads.filter((t) => t !== undefined);
    await Promise.race([Promise.all(all.map((t) => t.stopped)), new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
    closing();
    const ended = await Promise.race([
      Promise.all(all.map((t) => t.exited)).then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), STOP_WAIT_MS).unref()),
    ]);
    if (!ended) {
      this.log.warn(`session I/O threads did not end within ${STOP_WAIT_MS} ms of the stop; left running unreferenced`);
      for (const t of all) t.worker.unref();
    }
  }
}
