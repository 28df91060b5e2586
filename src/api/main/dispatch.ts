/**
 * Main thread: hands an API request to a handler on the event threads. The request is opened
 * in the server's `PendingRequests` (its answer, deadline and audit line), then queued as an
 * `_gsf.api` event of kind `api` with the given tag and name.
 */
import { answersAsItself, describeError, gsfError } from '../../errors.ts';
import { hasLoneSurrogate } from '../../text.ts';
import type { EventRuntime } from '../../events/runtime.ts';
import type { Dispatcher } from '../../events/main/dispatcher.ts';
import type { Logger } from '../../log/logger.ts';
import { encodePayload } from '../../events/codec.ts';
import { API_EVENT, apiTargets, type ApiPayload } from '../api-event.ts';
import { PendingRequests } from './pending.ts';
import { LaterResponse, errorResponse, queryParam, type ApiRequest } from './router.ts';

/** One request for a handler. */
export interface HandlerRequest {
  /** The target key (see api-event.ts). */
  key: string;
  tag: number;
  /** Event name (profiled). */
  name: string;
  method: string;
  path: string;
  /** Audit line prefix. */
  audit: string;
  /** The operator a console change names (written in its audit line). */
  operator?: string;
  /** A native writer answers it. */
  native: boolean;
  args: unknown;
}

/** What handler routes of one server share. */
export interface HandlerServices {
  pending: PendingRequests;
  /** Stops listening for the dispatcher's ended events. */
  unlisten: () => void;
  dispatch(req: HandlerRequest): LaterResponse;
  /** Users of the services (console, plugin routes); the last to stop closes them. */
  users: number;
}

const byDispatcher = new WeakMap<Dispatcher, HandlerServices>();

/** The handler services of a server (made on first use; `release` closes them). */
export function handlerServices(rt: EventRuntime, dispatcher: Dispatcher, timeoutMs: number, log: Logger): HandlerServices {
  let s = byDispatcher.get(dispatcher);
  if (s) {
    s.users++;
    return s;
  }
  apiTargets(rt);
  const pending = new PendingRequests(timeoutMs, log);
  s = {
    pending,
    // A request whose event will never finish is answered now, not at its deadline.
    unlisten: dispatcher.onEventsGone((ids, why) => pending.eventsGone(ids, why)),
    users: 1,
    dispatch(req) {
      const answer = new LaterResponse();
      const rid = PendingRequests.nextId();
      pending.begin(rid, req, answer);
      try {
        // A native handler takes its arguments as msgpack: they travel as those bytes, so the
        // event thread hands them on without decoding and encoding them again.
        const args = req.native && req.args !== undefined ? encodePayload(req.args) : req.args;
        const payload: ApiPayload = [rid, req.key, `${req.method} ${req.path}`, args];
        pending.bindEvent(rid, rt.invokeEngine('api', API_EVENT, payload, { tag: req.tag, name: req.name }));
      } catch (err) {
        const e = answersAsItself(err) ? err : gsfError('GSF_ERR_UNAVAILABLE', describeError(err));
        pending.abandon(rid, errorResponse(e));
      }
      return answer;
    },
  };
  byDispatcher.set(dispatcher, s);
  return s;
}

/**
 * Releases one user of a server's handler services (a feature that stops); after the last one
 * new requests are refused, and the open ones wait for their events until `closeHandlerServices`.
 */
export function releaseHandlerServices(dispatcher: Dispatcher): void {
  const s = byDispatcher.get(dispatcher);
  if (!s || --s.users > 0) return;
  s.pending.refuseNew();
}

/**
 * Closes a server's handler services once its queue has drained: requests still open (their
 * events never ran, or ran out of time) are answered 503.
 */
export function closeHandlerServices(dispatcher: Dispatcher): void {
  const s = byDispatcher.get(dispatcher);
  if (!s) return;
  byDispatcher.delete(dispatcher);
  s.unlisten();
  s.pending.close();
}

/** How deep a request body's arrays and objects may nest. */
export const MAX_BODY_DEPTH = 100;

/** The deepest nesting of arrays and objects in JSON `text` (strings skipped), stopping past `limit`. */
function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) { // a string: skip to its closing quote
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}

/** A key no request may carry: it would be renamed on its way to the handler, and it is a prototype-pollution probe. */
const PROTO_KEY = '__proto__';


const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The body as text; 400 when it is not UTF-8 (RFC 8259 8.1: JSON text is UTF-8). */
export function bodyText(req: ApiRequest): string {
  try {
    return utf8.decode(req.body);
  } catch {
    // A replacement character in the handler's strings would hide the fault.
    throw gsfError('GSF_ERR_BAD_REQUEST', 'request body is not valid UTF-8');
  }
}

/** A `\\u` escape of a surrogate: the only way valid UTF-8 JSON text can hold an unpaired one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * The JSON body of a request: undefined when empty; 400 when it is not JSON, nests deeper
 * than MAX_BODY_DEPTH, has a key `__proto__`, or a string (key or value) with an unpaired
 * surrogate: it has no UTF-8 form, so it would reach the handler as U+FFFD, not as sent.
 */
export function jsonBody(req: ApiRequest): unknown {
  if (req.body.length === 0) return undefined;
  const text = bodyText(req);
  if (jsonDepth(text, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
    throw gsfError('GSF_ERR_BAD_REQUEST', `request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`);
  }
  let proto = false;
  let lone: string | null = null;
  const checkText = SURROGATE_ESCAPE.test(text);
  let body: unknown;
  try {
    body = JSON.parse(text, (key, value: unknown) => {
      if (key === PROTO_KEY) proto = true;
      if (checkText && lone === null) {
        if (hasLoneSurrogate(key)) lone = 'a key';
        else if (typeof value === 'string' && hasLoneSurrogate(value)) lone = key === '' ? 'the body' : `the value of '${key}'`;
      }
      return value;
    });
  } catch {
    throw gsfError('GSF_ERR_BAD_REQUEST', 'request body is not valid JSON');
  }
  if (proto) throw gsfError('GSF_ERR_BAD_REQUEST', `request body has a key '${PROTO_KEY}', which no request may use`);
  if (lone !== null) throw gsfError('GSF_ERR_BAD_REQUEST', `request body: ${lone} holds an unpaired UTF-16 surrogate (text with no UTF-8 form)`);
  return body;
}

/** The query of a request as an object; 400 for a key `__proto__` and for a key given more than once (router.ts `queryParam`). */
export function queryObject(req: ApiRequest): Record<string, string> {
  if (req.query.has(PROTO_KEY)) throw gsfError('GSF_ERR_BAD_REQUEST', `query has a key '${PROTO_KEY}', which no request may use`);
  const object: Record<string, string> = {};
  for (const key of req.query.keys()) {
    if (!Object.hasOwn(object, key)) object[key] = queryParam(req, key)!;
  }
  return object;
}
