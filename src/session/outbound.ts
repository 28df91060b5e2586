/**
 * Session operations requested on event workers (send, broadcast, close, account calls) reach
 * the main thread, which owns the sockets.
 *
 * Frames are encoded on the worker and collected while a batch of events runs; the worker
 * posts them in one `OutboundBatch` before it completes the batch (`flushOutbound`), so a
 * session's replies leave in the order its events ran. Batches from different workers are
 * put back in posting order on the main thread by a process-wide sequence number (a shared
 * counter), because messages from two worker ports may be delivered in either order.
 *
 * Account calls need an answer: each worker opens one MessageChannel to the main thread on
 * first use and awaits `AccountResponse`s on it.
 */
import {
  getEnvironmentData, isMainThread, MessageChannel, parentPort, setEnvironmentData, type MessagePort,
} from 'node:worker_threads';

/** Operation codes inside `OutboundBatch.ops`. */
export const Op = {
  /** [SEND, sessionId, frame] */
  send: 1,
  /** [BROADCAST, jsonFrame | null, msgpackFrame | null, sessionIds | null (every session)] */
  broadcast: 2,
  /** [CLOSE, sessionId, closeCode, reason] */
  close: 3,
  /** [JOIN, sessionId, group] */
  join: 4,
  /** [LEAVE, sessionId, group] */
  leave: 5,
  /** [PUBLISH, group, jsonFrame, msgpackFrame] */
  publish: 6,
  /** [SEND_TEXT, sessionId, length]: a text frame, the next `length` characters of the batch's `text` */
  sendText: 7,
} as const;

/** Worker → main: the outbound operations of one batch of events. */
export interface OutboundBatch {
  gsf: 'session.out';
  seq: number;
  ops: unknown[];
  /** The text frames of the `sendText` operations, one after another (one string to copy, not one per frame). */
  text: string;
}

/** Worker → main, once per worker: the port account calls travel on. */
export interface AccountPortMessage {
  gsf: 'session.accounts';
  port: MessagePort;
}

/** Account operations of `AccountRequest`. */
export type AccountOp = 'login' | 'logout' | 'logoutSession' | 'locate' | 'accountOf';

/** Worker → main on the account port. */
export interface AccountRequest {
  rid: number;
  op: AccountOp;
  args: unknown[];
}

/** Main → worker on the account port. */
export interface AccountResponse {
  rid: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

const SEQ_KEY = 'gsf.session.outbound-seq';

// Set once on the main thread before any worker exists (this module is imported with the
// server), so every event worker inherits the same shared counter.
// Cells: [0] outbound sequence, [1] network pushes (workers wait on it), [2] linger in ms (0: off).
if (isMainThread && getEnvironmentData(SEQ_KEY) === undefined) {
  setEnvironmentData(SEQ_KEY, new SharedArrayBuffer(16) as unknown as string);
}
const seqCell = new Int32Array(getEnvironmentData(SEQ_KEY) as unknown as SharedArrayBuffer ?? new SharedArrayBuffer(16));

/**
 * Network wake-ups. A worker whose drain task finds the queue empty may wait up to the linger
 * time for the next client message instead of ending its task: the main thread's push then
 * wakes it directly (a futex wake) rather than through a new drain task, which takes two
 * message hops. Only on while a session service runs.
 */
export function setNetworkLinger(ms: number): void {
  Atomics.store(seqCell, 2, ms);
  if (ms === 0) Atomics.notify(seqCell, 1);
}

/**
 * Main thread, once per event-loop turn in which network events were queued (see
 * `PushStage`): wakes the workers waiting for them, all of them if more than one event came,
 * so a lingering worker claims the turn's messages as one batch.
 */
export function wakeNetworkWorkers(pushes: number): void {
  Atomics.add(seqCell, 1, 1);
  Atomics.notify(seqCell, 1, pushes > 1 ? Infinity : 1);
}

/** Worker: the push count to pass to `lingerForNetwork` (read before looking at the queue). */
export function networkMark(): number {
  return Atomics.load(seqCell, 1);
}

/** Worker: waits (at most `maxMs` and the linger time) for a push after `mark`; true if one came. */
export function lingerForNetwork(mark: number, maxMs: number): boolean {
  const linger = Atomics.load(seqCell, 2);
  if (linger === 0 || maxMs <= 0) return false;
  return Atomics.wait(seqCell, 1, mark, Math.min(linger, maxMs)) !== 'timed-out';
}

/** The next outbound sequence number the main thread should apply. */
export function currentSeq(): number {
  return Atomics.load(seqCell, 0);
}

let ops: unknown[] = [];
let text = '';
let flushScheduled = false;

/** Queues one operation; posted at the end of the running batch (or soon, outside events). */
export function queueOp(op: unknown[], insideEvent: boolean): void {
  for (const x of op) ops.push(x);
  if (!insideEvent && !flushScheduled) {
    flushScheduled = true;
    setImmediate(flushOutbound);
  }
}

/** Queues one frame to a session (the per-message path): text frames join the batch's `text`. */
export function queueSend(sessionId: number, frame: string | Uint8Array, insideEvent: boolean): void {
  if (typeof frame === 'string') {
    text += frame; // first: if the text cannot grow, no operation points past its end
    ops.push(Op.sendText, sessionId, frame.length);
  } else {
    ops.push(Op.send, sessionId, frame);
  }
  if (!insideEvent && !flushScheduled) {
    flushScheduled = true;
    setImmediate(flushOutbound);
  }
}

/** Posts the collected operations to the main thread (the worker calls it before completing a batch). */
export function flushOutbound(): void {
  flushScheduled = false;
  if (ops.length === 0 || parentPort === null) return;
  const batch: OutboundBatch = { gsf: 'session.out', seq: Atomics.add(seqCell, 0, 1), ops, text };
  ops = [];
  text = '';
  parentPort.postMessage(batch);
}

let accountPort: MessagePort | null = null;
let nextRid = 1;
const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

/** Runs an account operation on the main thread and resolves with its result. */
export function accountCall(op: AccountOp, args: unknown[]): Promise<unknown> {
  if (accountPort === null) {
    if (parentPort === null) return Promise.reject(new Error('account calls need an event worker or the main thread'));
    const { port1, port2 } = new MessageChannel();
    const hello: AccountPortMessage = { gsf: 'session.accounts', port: port2 };
    parentPort.postMessage(hello, [port2]);
    port1.on('message', (r: AccountResponse) => {
      const p = pending.get(r.rid);
      if (!p) return;
      pending.delete(r.rid);
      if (r.ok) p.resolve(r.value);
      else p.reject(new Error(r.error ?? 'account call failed'));
    });
    port1.unref();
    accountPort = port1;
  }
  const rid = nextRid++;
  return new Promise((resolve, reject) => {
    pending.set(rid, { resolve, reject });
    const req: AccountRequest = { rid, op, args };
    accountPort!.postMessage(req);
  });
}

/**
 * Main thread: applies `OutboundBatch`es in sequence order. A batch whose predecessor never
 * arrives (its worker was ended between numbering and posting) is applied after `gapMs`.
 */
export class OutboundReceiver {
  private expected = currentSeq();
  private readonly early = new Map<number, OutboundBatch>();
  private gapTimer: NodeJS.Timeout | null = null;

  constructor(private readonly apply: (batch: OutboundBatch) => void, private readonly gapMs = 50) {}

  receive(batch: OutboundBatch): void {
    if (batch.seq === this.expected) {
      this.expected++;
      this.apply(batch);
      this.drainEarly();
      return;
    }
    if (batch.seq < this.expected) {
      this.apply(batch); // after a skipped gap: late, but not lost
      return;
    }
    this.early.set(batch.seq, batch);
    this.gapTimer ??= setTimeout(() => this.skipGap(), this.gapMs);
  }

  private drainEarly(): void {
    for (let next = this.early.get(this.expected); next !== undefined; next = this.early.get(this.expected)) {
      this.early.delete(this.expected);
      this.expected++;
      this.apply(next);
    }
    if (this.early.size === 0 && this.gapTimer !== null) {
      clearTimeout(this.gapTimer);
      this.gapTimer = null;
    }
  }

  private skipGap(): void {
    this.gapTimer = null;
    if (this.early.size === 0) return;
    this.expected = Math.min(...this.early.keys());
    this.drainEarly();
    if (this.early.size > 0) this.gapTimer = setTimeout(() => this.skipGap(), this.gapMs);
  }

  stop(): void {
    if (this.gapTimer !== null) clearTimeout(this.gapTimer);
    this.gapTimer = null;
  }
}
