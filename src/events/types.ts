/**
 * Named, typed messages between the dispatcher (main thread) and event workers, and the
 * shapes plugin handlers see.
 */
import type { ThreadContext } from '../hooks/thread-context.ts';
import type { MessagePort } from 'node:worker_threads';
import type { Manifest } from '../config/manifest.ts';

/** Kind names of events, as handlers see them. */
export type EventKindName = 'user' | 'network' | 'timer' | 'engine' | 'api';

/** workerData of every event worker. */
export interface WorkerInit {
  manifest: Pick<Manifest, 'file' | 'dir' | 'components' | 'plugins'> & { listed: string[] };
  /** Resolved plugin module files, in load order. */
  pluginFiles: string[];
  /**
   * The module that builds a worker's thread context and loads the plugins on it (it exports
   * `createThreadContext`, as `WorkerContextModule` types it): the layer above the event system,
   * named here by the server so that events/ imports none of it.
   */
  contextModule: string;
  /** A shared cell the main thread moves after it published a flag change (`FlagRegistry.follow`). */
  configStamp: Int32Array;
}

/** What `WorkerInit.contextModule` exports. */
export interface WorkerContextModule {
  createThreadContext(manifest: WorkerInit['manifest'], role: 'worker', pluginFiles: string[]): Promise<ThreadContext>;
}

/**
 * Dispatcher → worker: serve events until the epoch ends (`wake.ts`). A worker runs one serve
 * task at a time for its whole life; it claims ready events from the native queue itself.
 */
export interface ServeTask {
  taskId: number;
  /** The serve epoch this task belongs to: when the current epoch moves on, the task ends. */
  epoch: number;
  /** Most events claimed at once. */
  maxBatch: number;
  /** The serve loop yields to the thread's event loop at least this often while busy. */
  budgetMs: number;
  /** Most events awaiting at once on this worker; at the cap it claims nothing new. */
  maxAwaiting: number;
  /** Only finish loading (start-up): the dispatcher sends one per worker. */
  warmup?: boolean;
}

/** Worker → dispatcher: what one serve task did. */
export interface ServeResult {
  ran: number;
  failed: number;
  /** The slot was revoked (an event of it timed out) while the task ran. */
  revoked: boolean;
}

/**
 * A port from an event worker to the main thread for one feature's traffic (session frames,
 * account calls). Sent once per worker on its parent port; the dispatcher hands it to the
 * feature that listens for that channel name, and the traffic then bypasses the dispatcher.
 */
export interface ChannelHello {
  type: 'channel';
  channel: ChannelName;
  threadId: number;
  port: MessagePort;
}

/** Names of worker → main channels. */
export type ChannelName = 'session-out' | 'accounts' | 'cluster';

/** Every message an event worker posts on its parent port. */
export type WorkerMessage = ChannelHello;

/**
 * What a feature whose event-worker code produces effects for the main thread (session
 * frames) plugs into the worker's serve loop. The loop calls it between events.
 */
export interface WorkerEffects {
  /** Before an event starts: what earlier events produced must reach the main thread even if this worker is ended. */
  commit(): void;
  /** After a claim completes, and before the worker idles: hand what was produced to the main thread. */
  flush(): void;
  /** An event parks: what its synchronous run produced is taken back and held until it finishes. */
  hold(event: HeldEffects): void;
  /** An awaiting event finished: what it produced while it awaited goes out now. */
  release(event: HeldEffects): void;
  /** An awaiting event timed out or was abandoned: what it produced while it awaited is dropped. */
  discard(event: HeldEffects): void;
}

/**
 * What the object model plugs into the event runtime: an event that changed objects finishes
 * only once its changes are durable (SPEC 3.3, 6.2.6).
 */
export interface EventObjects {
  /**
   * Commits the event's changes as one transaction; on a conflict calls `rerun` (the handler
   * again) and commits what that run changed, up to the rerun limit, then rejects. Fills the
   * object and rerun fields of the event's profiler `record`.
   */
  commit(event: EventContext & { tx?: unknown; timedOut?: boolean }, record: Float64Array, rerun: () => unknown): Promise<void>;
  /** Object-commit conflicts on this thread so far (each one runs its event again). */
  readonly conflicts: number;
  /**
   * Commits of this thread waiting for the writer's answer: also those of events that timed
   * out, which must hear it (a conflict's answer gives them a turn they must let go of).
   */
  readonly inFlight: number;
  /** Whether the event's transaction has changes to commit (read-only events have none). */
  changed(event: EventContext & { tx?: unknown }): boolean;
  /**
   * Finishes the transaction of an event whose handler returned without changing objects: its
   * object figures go into `record` at `at`, and the event needs no commit (false: it changed
   * objects and must commit).
   */
  finishClean(event: EventContext & { tx?: unknown }, record: Float64Array, at: number): boolean;
  /** Drops the event's uncommitted changes (its handler failed). */
  discard(event: EventContext & { tx?: unknown }): void;
}

/** Effects an awaiting event produced, held until it finishes (kept on the running event). */
export interface HeldEffects {
  held: unknown[] | null;
  /** The request the event answers, if it is an API or console event (src/api/worker/answer-sink.ts). */
  call?: unknown;
  /** Answers it gave that wait for it to finish (src/api/worker/answer-sink.ts). */
  heldAnswers?: unknown[];
}

/**
 * Main-thread side of `WorkerEffects`: when a worker ends (its event timed out, it crashed,
 * its pool was replaced), what its finished events produced and did not post yet is delivered
 * ahead of the events it gave back to the queue. `reserve` runs before the queue takes the
 * worker's claim back, `recover` after (`ended` false: the worker was not ended after all).
 */
export interface WorkerEndHooks {
  reserve(threadId: number): unknown;
  recover(token: unknown, ended: boolean): void;
}

/** What a handler receives besides its payload. */
export interface EventContext {
  readonly id: number;
  readonly tag: number;
  readonly kind: EventKindName;
  /** Session the event belongs to (network events and events derived from them), or null. */
  readonly sessionId: number | null;
  /** Current event name (see `setEventName`). */
  readonly name: string;
  /** Renames the running event (SPEC 6.3); call it first in the handler. */
  setEventName(name: string): void;
  /** Awaits engine I/O; the time spent waiting counts as io-wait time in the profiler. */
  io<T>(work: Promise<T>): Promise<T>;
}

/**
 * The payload of a network event: the client's raw frame, `bytes[start, end)` of the worker's
 * claim buffer. One object is reused for every network event of a worker, and the bytes are
 * overwritten by the next claim: the handler reads them before it returns or awaits.
 */
export interface NetworkFrame {
  bytes: Uint8Array;
  start: number;
  end: number;
  /** Counts the worker's claims: the same number means the same claim buffer contents. */
  claim: number;
  /** Bytes of the claim buffer the current claim fills (from offset 0). */
  claimEnd: number;
}

export type EventHandler<P = unknown> = (payload: P, ctx: EventContext) => void | Promise<void>;

/** Options of `invoke`. */
export interface InvokeOptions {
  /** Tag to serialise on; omitted: the rules of SPEC 6.2.4. */
  tag?: number;
  /** Event name for diagnostics and profiling. */
  name?: string;
}

/** What the timeout handlers receive (SPEC 6.3). */
export type TimeoutHandler = (eventName: string, eventId: number, eventTag: number, sessionId: number | null) => void;
