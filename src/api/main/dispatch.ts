/**
 * Main thread: hands an API request to a handler on the event threads. The request is opened
 * in the server's `PendingRequests` (its answer, deadline and audit line), then queued as an
 * `_gsf.api` event of kind `api` with the given tag and name.
 */
import { GsfError, describeError, gsfError } from '../../errors.ts';
import type { EventRuntime } from '../../events/runtime.ts';
import type { Dispatcher } from '../../events/main/dispatcher.ts';
import type { Logger } from '../../log/logger.ts';
import { encodePayload } from '../../events/codec.ts';
import { API_EVENT, apiTargets, type ApiPayload } from '../api-event.ts';
import { PendingRequests } from './pending.ts';
import { LaterResponse, errorResponse, type ApiRequest } from './router.ts';

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
        rt.invokeEngine('api', API_EVENT, payload, { tag: req.tag, name: req.name });
      } catch (err) {
        const e = err instanceof GsfError && err.status > 0 ? err : gsfError('GSF_ERR_UNAVAILABLE', describeError(err));
        pending.abandon(rid, errorResponse(e));
      }
      return answer;
    },
  };
  byDispatcher.set(dispatcher, s);
  return s;
}

/** Releases one user of a server's handler services; the last one closes them. */
export function releaseHandlerServices(dispatcher: Dispatcher): void {
  const s = byDispatcher.get(dispatcher);
  if (!s || --s.users > 0) return;
  byDispatcher.delete(dispatcher);
  s.pending.close();
}

/** The JSON body of a request: undefined when empty; 400 when it is not JSON. */
export function jsonBody(req: ApiRequest): unknown {
  if (req.body.length === 0) return undefined;
  try {
    return JSON.parse(req.body.toString('utf8'));
  } catch {
    throw gsfError('GSF_ERR_BAD_REQUEST', 'request body is not valid JSON');
  }
}
