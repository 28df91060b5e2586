/**
 * Named, typed messages between the dispatcher (main thread) and event workers, and the
 * shapes plugin handlers see.
 */
import type { Manifest } from '../config/manifest.ts';

/** Kind names of events, as handlers see them. */
export type EventKindName = 'user' | 'network' | 'timer' | 'engine' | 'api';

/** workerData of every event worker. */
export interface WorkerInit {
  manifest: Pick<Manifest, 'file' | 'dir' | 'components' | 'plugins'> & { listed: string[] };
  /** Resolved plugin module files, in load order. */
  pluginFiles: string[];
}

/** Dispatcher → worker: claim and run ready events until the queue is empty or the budget ends. */
export interface DrainTask {
  taskId: number;
  budgetMs: number;
  maxBatch: number;
  /** Only finish loading (start-up): the dispatcher sends one per worker. */
  warmup?: boolean;
}

/** Worker → dispatcher: what one drain task did. */
export interface DrainResult {
  ran: number;
  failed: number;
  /** The slot was revoked (its event timed out) while the task ran. */
  revoked: boolean;
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
