/**
 * Main-thread side of requests answered by handlers on event threads (plugin routes and the
 * operations console): each gets a request id and stays open until its answer arrives through
 * the native answer mailbox (answers of finished events, posted by event threads; native
 * writers used outside their event), or until the handler deadline passes (504). The mailbox
 * wakes this thread once when it gets its first answer, and is drained whole: answers of many
 * requests and threads cost one wake-up. Every request writes one audit line:
 * method, path, status, duration; never a body.
 */
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';
import { groupLines, type Logger } from '../log/logger.ts';
import { createLineLimiter, type LineLimiter } from '../log/rate-limit.ts';
import type { ApiResponse } from './router.ts';
import { nativeAnswer } from './writer.ts';

interface Pending {
  method: string;
  path: string;
  /** Audit line prefix: `cs-api` or `api`. */
  audit: string;
  start: number;
  deadline: number;
  /** A native writer may answer it: its native state is released at the end. */
  native: boolean;
  resolve(r: ApiResponse): void;
}

/** What one request needs to be opened. */
export interface OpenRequest {
  method: string;
  path: string;
  audit: string;
  native: boolean;
}

const JSON_TYPE = 'application/json';
/** Request ids are unique in the process (native writers are keyed by them), across servers too. */
let nextRid = 1;

export class PendingRequests {
  private readonly open = new Map<number, Pending>();
  private timer: NodeJS.Timeout | null = null;
  private readonly lateLines: LineLimiter;
  private closed = false;

  constructor(private readonly timeoutMs: number, private readonly log: Logger) {
    this.lateLines = createLineLimiter({ perKeyPerSecond: 5, log });
    native.pluginApiTakeAnswers(); // answers left over from an earlier server of this process
    native.pluginApiOnAnswers(() => this.drain());
  }

  /** Opens a request; `rid` goes into its event, the promise resolves with its answer. */
  begin(req: OpenRequest): { rid: number; answer: Promise<ApiResponse> } {
    if (this.closed) throw gsfError('GSF_ERR_UNAVAILABLE', 'the server is stopping');
    const rid = nextRid++;
    const start = performance.now();
    let resolve!: (r: ApiResponse) => void;
    const answer = new Promise<ApiResponse>((r) => { resolve = r; });
    this.open.set(rid, { method: req.method, path: req.path, audit: req.audit, native: req.native, start, deadline: start + this.timeoutMs, resolve });
    this.timer ??= setTimeout(() => this.expire(), this.timeoutMs + 1);
    return { rid, answer };
  }

  /** Ends a request without an event (it could not be queued). */
  abandon(rid: number, response: ApiResponse): void {
    this.finish(rid, response);
  }

  /** Requests open now. */
  get size(): number {
    return this.open.size;
  }

  /** Answers everything in the mailbox: event threads' finished answers and native writers' later ones. */
  private drain(): void {
    // The batch's audit lines go out in a few writes, not one each.
    groupLines(() => this.answerAll(native.pluginApiTakeAnswers()));
  }

  private answerAll(batch: unknown[]): void {
    for (let i = 0; i + 4 < batch.length; i += 5) {
      const rid = batch[i] as number, status = batch[i + 1] as number, body = batch[i + 2] as string | null;
      if (batch[i + 4] === true) {
        this.answered(rid, status, body);
      } else {
        const r = nativeAnswer(rid, status, body, batch[i + 3] as string);
        this.answered(r[0], r[1], r[2]);
      }
    }
  }

  private answered(rid: number, status: number, body: string | null): void {
    if (!this.open.has(rid)) {
      this.lateLines.warn('late', `an answer to request ${rid} came after its deadline (504 was sent); it was ignored`);
      return;
    }
    this.finish(rid, body === null ? { status } : { status, body, contentType: JSON_TYPE });
  }

  private finish(rid: number, response: ApiResponse): void {
    const p = this.open.get(rid);
    if (p === undefined) return;
    this.open.delete(rid);
    if (p.native) native.pluginApiRelease(rid);
    const ms = performance.now() - p.start;
    this.log.info(`${p.audit} audit: method=${p.method}, path=${p.path}, status=${response.status}, duration_in_ms=${ms.toFixed(3)}`);
    p.resolve(response);
  }

  /** Answers 504 to every request past its deadline (they are in deadline order). */
  private expire(): void {
    this.timer = null;
    const now = performance.now();
    for (const [rid, p] of this.open) {
      if (p.deadline > now) {
        this.timer = setTimeout(() => this.expire(), Math.max(1, p.deadline - now + 1));
        return;
      }
      const err = gsfError('GSF_ERR_HANDLER_TIMEOUT', p.method, p.path, this.timeoutMs);
      this.log.warn(`GSF_ERR_HANDLER_TIMEOUT: ${err.message}`);
      this.finish(rid, { status: 504, body: err.toBody() });
    }
  }

  /** Answers 503 to every open request and stops listening. */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    native.pluginApiOnAnswers(null);
    for (const rid of [...this.open.keys()]) {
      this.finish(rid, { status: 503, body: gsfError('GSF_ERR_UNAVAILABLE', 'the server stopped before the handler answered').toBody() });
    }
    this.lateLines.close();
  }
}
