/**
 * Main-thread side of requests answered by handlers on event threads (plugin routes and the
 * operations console): each gets a request id and stays open until its answer arrives through
 * the native answer mailbox (answers of finished events, posted by event threads; native
 * writers used outside their event), or until the handler deadline passes (504). The mailbox
 * wakes this thread once when it gets its first answer, and is drained whole: answers of many
 * requests and threads cost one wake-up. Every request writes one audit line:
 * method, path, status, duration (and the operator a console change names); never a body.
 */
import { native } from '../../native.ts';
import { describeError, gsfError } from '../../errors.ts';
import { groupLines, type Logger } from '../../log/logger.ts';
import { createLineLimiter, type LineLimiter } from '../../log/rate-limit.ts';
import { LaterResponse, type ApiResponse } from './router.ts';
import { nativeAnswer } from '../writer.ts';
import type { EventGone } from '../../events/main/dispatcher.ts';
import type { CancelledEvent } from '../../native.ts';

interface Pending {
  method: string;
  path: string;
  /** Audit line prefix: `cs-api` or `api`. */
  audit: string;
  /** The operator a console change names (X-Gsf-Operator), or ''. */
  operator: string;
  start: number;
  deadline: number;
  /** A native writer may answer it: its native state is released at the end. */
  native: boolean;
  answer: LaterResponse;
  /** The id of its event, once queued (0 before). */
  eventId: number;
}

/** What one request needs to be opened. */
export interface OpenRequest {
  method: string;
  path: string;
  audit: string;
  /** The operator a console change names, written in its audit line; '' or absent: none. */
  operator?: string;
  native: boolean;
}

const JSON_TYPE = 'application/json';
/** Bytes before an answer record's body (see `answerAll`). */
const ANSWER_HEAD = 21;
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

  /** Opens a request as `rid` (which goes into its event); `answer` is settled with its answer. */
  begin(rid: number, req: OpenRequest, answer: LaterResponse): void {
    if (this.closed) throw gsfError('GSF_ERR_UNAVAILABLE', 'the server is stopping');
    const start = performance.now();
    this.open.set(rid, { method: req.method, path: req.path, audit: req.audit, operator: req.operator ?? '', native: req.native, start, deadline: start + this.timeoutMs, answer, eventId: 0 });
    this.timer ??= setTimeout(() => this.expire(), this.timeoutMs + 1);
  }

  /** Notes the event that handles request `rid` (see `eventsGone`). */
  bindEvent(rid: number, eventId: number): void {
    const p = this.open.get(rid);
    if (p === undefined) return;
    p.eventId = eventId;
    this.byEvent.set(eventId, rid);
  }

  /**
   * Answers now (504) the requests whose events will never finish: timed out or abandoned. A
   * native writer that has not answered may still answer such a request meanwhile; the first
   * answer wins.
   */
  eventsGone(events: readonly CancelledEvent[], why: EventGone): void {
    // A stop ends its threads at the drain limit: those requests get its 503 (`close`).
    if (this.closed) return;
    for (const { id } of events) {
      const rid = this.byEvent.get(id);
      if (rid === undefined) continue;
      let p = this.open.get(rid);
      if (p === undefined) continue;
      if (p.native) {
        // A native writer outlives its event: it may still answer before the deadline, unless
        // it has answered already. Its answer is then in the mailbox (taken now), or it went
        // with the timed-out call's effects, which are dropped.
        this.drain();
        p = this.open.get(rid);
        if (p === undefined || !native.pluginApiAnswered(rid)) continue;
      }
      const err = gsfError('GSF_ERR_HANDLER_EVENT_ENDED', p.method, p.path, why);
      this.log.warn(`GSF_ERR_HANDLER_EVENT_ENDED: ${err.message}`);
      this.finish(rid, { status: 504, body: err.toBody() });
    }
  }

  private readonly byEvent = new Map<number, number>();

  /** A request id, unique in the process. */
  static nextId(): number {
    return nextRid++;
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

  /**
   * Answers the records of `batch`, each `f64 rid, i32 status, u8 flags (1: a body, 2: an HTTP
   * status), u32 body length, u32 message length`, then the body's and the message's bytes
   * (little-endian). A body is written to its socket as those bytes.
   */
  private answerAll(batch: Buffer): void {
    const view = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);
    let at = 0;
    while (at + ANSWER_HEAD <= batch.length) {
      const rid = view.getFloat64(at, true), status = view.getInt32(at + 8, true), flags = view.getUint8(at + 12);
      const bodyLength = view.getUint32(at + 13, true), messageLength = view.getUint32(at + 17, true);
      at += ANSWER_HEAD;
      const body = (flags & 1) !== 0 ? batch.subarray(at, at + bodyLength) : null;
      at += bodyLength;
      if ((flags & 2) !== 0) {
        this.answered(rid, status, body);
      } else {
        const r = nativeAnswer(rid, status, body, batch.toString('utf8', at, at + messageLength));
        this.answered(r[0], r[1], r[2]);
      }
      at += messageLength;
    }
  }

  private answered(rid: number, status: number, body: string | Buffer | null): void {
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
    if (p.eventId !== 0) this.byEvent.delete(p.eventId);
    if (p.native) native.pluginApiRelease(rid);
    const ms = performance.now() - p.start;
    const who = p.operator === '' ? '' : `, operator=${JSON.stringify(p.operator)}`;
    this.log.info(`${p.audit} audit: method=${p.method}, path=${p.path}, status=${response.status}, duration_in_ms=${ms.toFixed(3)}${who}`);
    try {
      p.answer.settle(response);
    } catch (err) {
      // One answer that cannot be written never keeps the rest of its batch from theirs.
      this.lateLines.error('write', `answering ${p.method} ${p.path} failed: ${describeError(err)}`);
    }
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

  /**
   * The server stops: new requests are refused (503), those open are still answered by their
   * events while the queue drains (`close` answers what is left).
   */
  refuseNew(): void {
    this.closed = true;
  }

  /** Takes the answers already posted, answers 503 to every request still open, and stops listening. */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    native.pluginApiOnAnswers(null);
    this.drain(); // answers posted and not yet taken
    for (const rid of [...this.open.keys()]) {
      this.finish(rid, { status: 503, body: gsfError('GSF_ERR_UNAVAILABLE', 'the server stopped before the handler answered').toBody() });
    }
    this.lateLines.close();
  }
}
