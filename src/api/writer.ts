/**
 * Response writers of plugin route and operations-console handlers (event-worker side). A
 * writer answers one HTTP request exactly once, now or later, in one of six kinds: void (the
 * status only), bool, JSON object, JSON array, string, string array; or fails it with a status
 * of the shared status table (`API_STATUS`, `GSF_STATUS_*` of gsf_plugin.h). A second answer is
 * ignored and logged. The answer is turned into its HTTP status and JSON body here, on the
 * worker, so the main thread only writes bytes.
 */
import { API_STATUS, ErrorTable, GsfError, answersAsItself, describeError, format, gsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';

/** What a writer answers (`GSF_ANSWER_*` of gsf_plugin.h); routes and custom queries take several. */
export const AnswerKind = {
  void: 0, bool: 1, jsonObject: 2, jsonArray: 3, string: 4, stringArray: 5,
  /** A JSON object or an array of them (custom queries). */
  json: 6,
  /** Any of the six (plugin routes). */
  any: 255,
} as const;
export type AnswerKindValue = (typeof AnswerKind)[keyof typeof AnswerKind];

const KIND_NAMES: Record<number, string> = {
  0: 'void', 1: 'bool', 2: 'JSON object', 3: 'JSON array', 4: 'string', 5: 'string array', 6: 'JSON object or array', 255: 'any',
};

/** Name of an answer kind, for messages. */
export function answerKindName(kind: number): string {
  return KIND_NAMES[kind] ?? `kind ${kind}`;
}

/** Handler statuses by name (the numbers are `GSF_STATUS_*`). */
export const ApiStatus = {
  OK: 0, INVALID_ARGUMENT: 1, NOT_FOUND: 2, CONFLICT: 3, UNAVAILABLE: 4, INTERNAL: 5, NOT_IMPLEMENTED: 6,
  PERMISSION_DENIED: 7, UNAUTHENTICATED: 8, RESOURCE_EXHAUSTED: 9, EXPIRED: 10,
} as const;
export type ApiStatusName = keyof typeof ApiStatus;

/** One answer as it travels to the main thread: request id, HTTP status, JSON body text (none for 204). */
export type AnswerRecord = [rid: number, status: number, body: string | null];

/** The HTTP answer of a failure status (INVALID_ARGUMENT → 400 GSF_ERR_BAD_REQUEST, …). */
export function failureAnswer(rid: number, status: number, message: string): AnswerRecord {
  const entry = API_STATUS[status] ?? API_STATUS[ApiStatus.INTERNAL]!;
  const code = entry.code ?? 'GSF_ERR_INTERNAL';
  const text = message !== '' ? message : `the handler answered ${entry.name}`;
  return [rid, entry.http === 200 ? 500 : entry.http, JSON.stringify({ error: code, message: code === 'GSF_ERR_INTERNAL' ? format(ErrorTable.GSF_ERR_INTERNAL.message, [text]) : text })];
}

/** The HTTP answer of a native writer's answer: a status (`GSF_STATUS_*`), a JSON body or none, a failure's message. */
export function nativeAnswer<B extends string | Buffer>(rid: number, status: number, body: B | null, message: string): [number, number, B | string | null] {
  if (status !== ApiStatus.OK) return failureAnswer(rid, status, message);
  return [rid, body === null ? 204 : 200, body];
}

/** The answer of an error a handler threw: a `GsfError` with an HTTP status answers as itself. */
export function thrownAnswer(rid: number, err: unknown): AnswerRecord {
  if (answersAsItself(err)) {
    try {
      return [rid, err.status, JSON.stringify(err.toBody())];
    } catch {
      // Details JSON cannot hold (a BigInt, a cycle): the status, code and message still answer.
      return [rid, err.status, JSON.stringify({ error: err.code, message: err.message })];
    }
  }
  return [rid, 500, JSON.stringify(gsfError('GSF_ERR_INTERNAL', describeError(err)).toBody())];
}

/** Where a writer's answer goes (the worker's answer sink, see answer-sink.ts). */
export interface AnswerTarget {
  /** Delivers the call's answer; it goes out when the call's event has finished. */
  deliver(call: WriterCall, record: AnswerRecord): void;
}

/** The request a writer answers, shared by its runs (an object conflict runs the handler again). */
export interface WriterCall {
  readonly rid: number;
  /** `METHOD path`, for log lines. */
  readonly label: string;
  answered: boolean;
}

function statusOf(status: number | ApiStatusName): number {
  const n = typeof status === 'number' ? status : ApiStatus[status];
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 10) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `fail: status must be a failure status (INVALID_ARGUMENT … EXPIRED, 1 to 10), got ${String(status)}`);
  }
  return n;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  // A Map or a Set would be written as `{}`, its entries silently dropped.
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof Set);
}

/**
 * A response writer. `ok(value)` answers in the writer's kind; routes' writers (kind any) also
 * have one method per kind. Wrong values throw `GSF_ERR_BAD_ARGUMENT` and answer nothing.
 */
export class ResponseWriter {
  constructor(private readonly call: WriterCall, readonly kind: number, private readonly target: AnswerTarget,
    private readonly log: Logger) {}

  /** Whether this request was answered. */
  get answered(): boolean {
    return this.call.answered;
  }

  /** `METHOD path` of the request. */
  get label(): string {
    return this.call.label;
  }

  /** The request's id (a native handler's writer token). */
  get requestId(): number {
    return this.call.rid;
  }

  /**
   * Delivers an answer a native writer made (its kind and the once-only rule were checked on the
   * native side); false, with nothing sent, when this request was answered already.
   */
  deliverNative(record: AnswerRecord): boolean {
    if (this.refuseSecond('native answer')) return false;
    this.target.deliver(this.call, record);
    return true;
  }

  /** Answers in the writer's kind: nothing (void), a boolean, an object, an array, a string, strings. */
  ok(value?: unknown): void {
    switch (this.kind) {
      case AnswerKind.void: return this.void();
      case AnswerKind.bool: return this.bool(value as boolean);
      case AnswerKind.jsonObject: return this.json(value as Record<string, unknown>);
      case AnswerKind.jsonArray: return this.array(value as unknown[]);
      case AnswerKind.string: return this.string(value as string);
      case AnswerKind.stringArray: return this.strings(value as string[]);
      default:
        if (Array.isArray(value)) return this.array(value);
        return this.json(value as Record<string, unknown>);
    }
  }

  /** 204, no body. */
  void(): void {
    this.answer(AnswerKind.void, null);
  }

  /** 200 `true` / `false`. */
  bool(value: boolean): void {
    if (typeof value !== 'boolean') throw this.bad(`a boolean, got ${typeof value}`);
    this.answer(AnswerKind.bool, value ? 'true' : 'false');
  }

  /** 200 with the object as JSON. */
  json(value: Record<string, unknown>): void {
    if (!isPlainObject(value)) throw this.bad(`a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
    this.answer(AnswerKind.jsonObject, this.stringify(value, '{'));
  }

  /** 200 with the array as JSON. */
  array(value: readonly unknown[]): void {
    if (!Array.isArray(value)) throw this.bad(`a JSON array, got ${typeof value}`);
    this.answer(AnswerKind.jsonArray, this.stringify(value, '['));
  }

  /** 200 with the string as a JSON string. */
  string(value: string): void {
    if (typeof value !== 'string') throw this.bad(`a string, got ${typeof value}`);
    this.answer(AnswerKind.string, JSON.stringify(value));
  }

  /** 200 with a JSON array of strings. */
  strings(value: readonly string[]): void {
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw this.bad('an array of strings');
    this.answer(AnswerKind.stringArray, JSON.stringify(value));
  }

  /** Fails the request with a status (`'NOT_FOUND'`, `ApiStatus.CONFLICT`, …) and a message for the caller. */
  fail(status: number | ApiStatusName, message = ''): void {
    const n = statusOf(status);
    if (this.refuseSecond(`fail(${API_STATUS[n]!.name})`)) return;
    this.target.deliver(this.call, failureAnswer(this.call.rid, n, String(message)));
  }

  /** The value as JSON, which must be an object (`{`) or an array (`[`): a `toJSON` may have made it anything. */
  private stringify(value: unknown, open: '{' | '['): string {
    let text: string | undefined;
    try {
      text = JSON.stringify(value) as string | undefined;
    } catch (err) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `${this.call.label}: the answer cannot be written as JSON: ${describeError(err)}`);
    }
    if (typeof text !== 'string' || text[0] !== open) {
      const got = text === undefined ? 'nothing' : `${text.slice(0, 40)}${text.length > 40 ? '…' : ''}`;
      throw this.bad(`${open === '{' ? 'a JSON object' : 'a JSON array'} once written as JSON (its toJSON gave ${got})`);
    }
    return text;
  }

  private bad(what: string): GsfError {
    return gsfError('GSF_ERR_BAD_ARGUMENT', `${this.call.label}: the answer must be ${what}`);
  }

  private answer(kind: number, body: string | null): void {
    const fits = this.kind === AnswerKind.any || this.kind === kind
      || (this.kind === AnswerKind.json && (kind === AnswerKind.jsonObject || kind === AnswerKind.jsonArray));
    if (!fits) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `${this.call.label}: this request answers a ${answerKindName(this.kind)}, not a ${answerKindName(kind)}`);
    }
    if (this.refuseSecond(answerKindName(kind))) return;
    this.target.deliver(this.call, [this.call.rid, body === null ? 204 : 200, body]);
  }

  /** True (and a log line) when the request was answered already. */
  private refuseSecond(what: string): boolean {
    if (!this.call.answered) {
      this.call.answered = true;
      return false;
    }
    this.log.warn(`${this.call.label}: a second answer (${what}) was ignored; a request is answered once`);
    return true;
  }
}
