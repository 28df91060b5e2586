/**
 * The API-service listener (component `ApiService`) on uWebSockets.js: REST groups add their
 * routes to its router; it reads bodies with a size limit and answers JSON errors for
 * unknown paths (404), wrong methods (405), big bodies (413), long paths (414) and failing
 * handlers (500). A handler that throws a `GsfError` gets that error's status and body. HEAD
 * is served by every GET route, and no answer to HEAD, 204 or 304 carries a body.
 */
import uWS from 'uWebSockets.js';
import { timingSafeEqual } from 'node:crypto';
import { listenUws, type Listening } from './listen.ts';
import { GsfError, answersAsItself, describeError, gsfError } from '../../errors.ts';
import type { Logger } from '../../log/logger.ts';
import { createLineLimiter, type LineLimiter } from '../../log/rate-limit.ts';
import { writeResponse } from './respond.ts';
import { LaterResponse, Router, errorResponse, type ApiRequest, type ApiResponse, type RouteHandler, type RouteMatch } from './router.ts';


/**
 * Longest request path answered. uWebSockets.js keeps at most 4 KiB of a request head that
 * arrives in more than one read, so a longer path is not reliably served at all; gsf refuses
 * the ones that do arrive with 414 rather than serving them only sometimes.
 */
export const MAX_PATH_BYTES = 4096;

export interface ApiServerOptions {
  address: string;
  port: number;
  maxBodyBytes: number;
  log: Logger;
  /** When non-empty, every request needs `Authorization: Bearer <token>` (the dashboard also `?token=`). */
  token?: string;
}

/** Constant-time comparison of a presented token with the configured one. */
function tokenMatches(presented: string, token: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Failure lines written per request path and second; a handler failing on every request writes a summary instead. */
const FAILURE_LINES_PER_SECOND = 5;

export class ApiServer {
  readonly router = new Router();
  private readonly app = uWS.App();
  private listening: Listening | null = null;
  /** The server stops: every request gets 503 (see `stopListening`). */
  private stopping = false;
  /** Requests whose handler has not answered yet: `close` answers them 503. */
  private readonly unanswered = new Set<() => void>();
  private readonly failureLog: LineLimiter;
  /** Route handlers whose GET and HEAD need no token (see `servePublicly`). */
  private readonly publicHandlers = new Set<RouteHandler>();
  /** Route handlers whose GET and HEAD may give the token as `?token=` (see `acceptQueryToken`). */
  private readonly queryTokenHandlers = new Set<RouteHandler>();

  constructor(private readonly options: ApiServerOptions) {
    this.failureLog = createLineLimiter({ perKeyPerSecond: FAILURE_LINES_PER_SECOND, log: options.log });
    // One uWS route per common method, so the method is known without asking for it.
    this.app.get('/*', (res, req) => this.onRequest(res, req, 'GET'));
    this.app.head('/*', (res, req) => this.onRequest(res, req, 'HEAD'));
    this.app.post('/*', (res, req) => this.onRequest(res, req, 'POST'));
    this.app.put('/*', (res, req) => this.onRequest(res, req, 'PUT'));
    this.app.del('/*', (res, req) => this.onRequest(res, req, 'DELETE'));
    this.app.patch('/*', (res, req) => this.onRequest(res, req, 'PATCH'));
    this.app.any('/*', (res, req) => this.onRequest(res, req, req.getMethod().toUpperCase()));
  }

  /** The port actually bound (after `listen`, also when 0 was asked). */
  get port(): number {
    return this.listening?.port ?? 0;
  }

  /**
   * GET and HEAD requests that these route handlers answer are served without the token: a
   * page that holds no data and asks for the token itself. Decided by the route a request
   * matches, not by its path: another route whose pattern also matches the page's paths (a
   * plugin's `/{player}/profile` matches `/console/profile`) still needs the token.
   */
  servePublicly(...handlers: RouteHandler[]): void {
    for (const h of handlers) this.publicHandlers.add(h);
  }

  /**
   * GET and HEAD requests that these route handlers answer may give the token as `?token=`
   * instead of the header (the dashboard page and its assets: a `<script>` tag sends no header).
   * Decided by the matched route, like `servePublicly`.
   */
  acceptQueryToken(...handlers: RouteHandler[]): void {
    for (const h of handlers) this.queryTokenHandlers.add(h);
  }

  private takesQueryToken(method: string, match: RouteMatch): boolean {
    return (method === 'GET' || method === 'HEAD') && match.kind === 'found' && this.queryTokenHandlers.has(match.handler);
  }

  private isPublic(method: string, match: RouteMatch): boolean {
    return (method === 'GET' || method === 'HEAD') && match.kind === 'found' && this.publicHandlers.has(match.handler);
  }

  async listen(): Promise<number> {
    this.listening = await listenUws(this.app, this.options.address, this.options.port, 'ApiService');
    return this.listening.port;
  }

  /**
   * Takes no new connections; what those open asked before is answered (a stop waits for it),
   * and what they ask from now on gets 503.
   */
  stopListening(): void {
    this.listening?.close();
    this.stopping = true;
  }

  /** Stops listening and closes every connection (a stopped server serves nothing). */
  close(): void {
    // A handler still running (a reload staging its new version) gets its client an answer,
    // not a connection closed under the request.
    for (const refuse of [...this.unanswered]) refuse();
    this.listening?.close();
    (this.app as uWS.TemplatedApp & { close(): void }).close(); // in uWebSockets.js 20.30, missing from its types
    this.failureLog.close();
  }

  private onRequest(res: uWS.HttpResponse, req: uWS.HttpRequest, method: string): void {
    // uWS request objects are only valid synchronously: a handler reads them while this callback
    // runs (see Request), and a synchronous answer is written at once (keeps uWS corking and
    // pipelining intact).
    const path = req.getUrl();
    const head = method === 'HEAD';
    const refuse = (response: ApiResponse, writeHead = head): void => {
      this.router.refused(method, path, response.status, (name) => req.getHeader(name));
      writeResponse(res, response, writeHead);
    };
    if (path.length > MAX_PATH_BYTES) {
      refuse(errorResponse(gsfError('GSF_ERR_URI_TOO_LONG', MAX_PATH_BYTES)));
      return;
    }
    if (this.stopping) {
      refuse(errorResponse(gsfError('GSF_ERR_UNAVAILABLE', 'the server is stopping')));
      return;
    }
    const match = this.router.match(method, path);
    const token = this.options.token ?? '';
    if (token !== '' && !this.isPublic(method, match)) {
      const auth = req.getHeader('authorization');
      // The scheme's name is case-insensitive (RFC 9110 11.1).
      // RFC 6750 2.1: "Bearer" 1*SP b64token.
      const presented = auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ' ? auth.slice(7).replace(/^ +/, '')
        : this.takesQueryToken(method, match) ? new URLSearchParams(req.getQuery() ?? '').get('token') ?? '' : '';
      if (!tokenMatches(presented, token)) {
        refuse(UNAUTHORIZED);
        return;
      }
    }
    // A HEAD answer is the GET answer without its body, Content-Length included.
    const asMethod = head ? 'GET' : method;
    if (match.kind === 'none') {
      refuse(errorResponse(gsfError('GSF_ERR_NOT_FOUND', asMethod, path)));
      return;
    }
    if (match.kind === 'method') {
      const err = new GsfError('GSF_ERR_METHOD_NOT_ALLOWED', [asMethod, path], { details: { allowed: match.allowed } });
      refuse(errorResponse(err, { Allow: match.allowed.join(', ') }));
      return;
    }
    if (match.kind === 'bad') {
      refuse(errorResponse(gsfError('GSF_ERR_BAD_REQUEST', `path segment '${match.segment}' is not valid percent-encoding of UTF-8`)));
      return;
    }
    if (method === 'GET' || head) {
      // Headers are read from uWS while the callback runs, and copied only if the handler goes async.
      this.dispatch(res, match.handler, new Request(method, path, match.params, null, req, EMPTY), null);
      return;
    }
    const rawQuery = req.getQuery() ?? '';
    const headers = new Map<string, string>();
    req.forEach((k, v) => headers.set(k, v));
    const limit = this.options.maxBodyBytes;
    const header = (name: string): string => headers.get(name) ?? '';
    if (Number(headers.get('content-length') ?? '0') > limit) {
      this.router.refused(method, path, 413, header);
      writeResponse(res, tooBig(limit));
      return;
    }
    const state = { aborted: false };
    res.onAborted(() => { state.aborted = true; });
    const chunks: Buffer[] = [];
    let size = 0;
    let rejected = false;
    res.onData((chunk, isLast) => {
      if (rejected) return;
      size += chunk.byteLength;
      if (size > limit) {
        rejected = true;
        this.router.refused(method, path, 413, header);
        if (!state.aborted) res.cork(() => writeResponse(res, tooBig(limit)));
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) this.dispatch(res, match.handler, new Request(method, path, match.params, rawQuery, headers, Buffer.concat(chunks)), state);
    });
  }

  /**
   * Runs a handler. `state` is null inside the uWS request callback (a synchronous answer is
   * written directly); otherwise it tracks whether the client went away.
   */
  private dispatch(res: uWS.HttpResponse, handler: RouteHandler, request: Request, state: { aborted: boolean } | null): void {
    let result: ApiResponse | Promise<ApiResponse> | LaterResponse;
    try {
      result = handler(request);
    } catch (err) {
      result = this.failure(request, err);
    }
    const head = request.method === 'HEAD';
    if (!(result instanceof LaterResponse)) request.detach(result instanceof Promise);
    else request.detach(false); // the handler has read what it needs: no copy of the headers is kept
    if (!(result instanceof Promise) && !(result instanceof LaterResponse)) {
      if (state === null) writeResponse(res, result, head);
      else if (!state.aborted) res.cork(() => writeResponse(res, result, head));
      return;
    }
    const answer = this.later(res, state, head);
    if (result instanceof LaterResponse) {
      result.onAnswer(answer);
      return;
    }
    result.then(answer, (err: unknown) => answer(this.failure(request, err)));
  }

  /** The writer of an answer that comes later: once, unless the client went away or the server closed first. */
  private later(res: uWS.HttpResponse, state: { aborted: boolean } | null, head: boolean): (r: ApiResponse) => void {
    const live = state ?? { aborted: false };
    if (state === null) res.onAborted(() => { live.aborted = true; });
    let answered = false;
    const answer = (r: ApiResponse): void => {
      if (answered) return;
      answered = true;
      this.unanswered.delete(refuse);
      if (!live.aborted) res.cork(() => writeResponse(res, r, head));
    };
    const refuse = (): void => answer(errorResponse(gsfError('GSF_ERR_UNAVAILABLE', 'the server stopped before this request was answered')));
    this.unanswered.add(refuse);
    return answer;
  }

  /** A `GsfError` with an HTTP status answers as itself; anything else is a logged 500. */
  private failure(request: Request, err: unknown): ApiResponse {
    if (answersAsItself(err)) return errorResponse(err);
    const where = `${request.method} ${request.path}`;
    this.failureLog.error(where, `GSF_ERR_INTERNAL: ${where} failed: ${describeError(err)}`);
    return errorResponse(gsfError('GSF_ERR_INTERNAL', describeError(err)));
  }
}

const EMPTY = Buffer.alloc(0);

/** Throws GSF_ERR_BAD_REQUEST unless every `%` of `query` starts an escape and the escapes spell UTF-8. */
function checkPercentEncoding(query: string): void {
  for (const part of query.split(/[&=]/)) {
    if (!part.includes('%')) continue;
    try {
      decodeURIComponent(part);
    } catch {
      throw gsfError('GSF_ERR_BAD_REQUEST', `query part '${part.slice(0, 64)}' is not valid percent-encoding of UTF-8`);
    }
  }
}
const UNAUTHORIZED: ApiResponse = errorResponse(gsfError('GSF_ERR_UNAUTHORIZED'), { 'WWW-Authenticate': 'Bearer' });

function tooBig(limit: number): ApiResponse {
  return errorResponse(gsfError('GSF_ERR_BODY_TOO_LARGE', limit));
}

/**
 * What a route handler sees of a request; the query is parsed on first use. Headers come from
 * a copied map, or (GET and HEAD) straight from the uWS request while its callback runs.
 */
class Request implements ApiRequest {
  private parsedQuery: URLSearchParams | null = null;
  private headers: ReadonlyMap<string, string> | null;
  private source: uWS.HttpRequest | null;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly params: Record<string, string>,
    private rawQuery: string | null,
    headers: Map<string, string> | uWS.HttpRequest,
    readonly body: Buffer,
  ) {
    this.headers = headers instanceof Map ? headers : null;
    this.source = headers instanceof Map ? null : headers;
  }

  /** The query; throws GSF_ERR_BAD_REQUEST when it is not valid percent-encoding of UTF-8, as a path segment would be refused. */
  get query(): URLSearchParams {
    if (this.parsedQuery === null) {
      const raw = this.rawQueryText();
      if (raw.includes('%')) checkPercentEncoding(raw);
      this.parsedQuery = new URLSearchParams(raw);
    }
    return this.parsedQuery;
  }

  private rawQueryText(): string {
    if (this.rawQuery === null) this.rawQuery = this.live().getQuery() ?? '';
    return this.rawQuery;
  }

  header(name: string): string {
    if (this.headers !== null) return this.headers.get(name.toLowerCase()) ?? '';
    return this.live().getHeader(name.toLowerCase());
  }

  /** The uWS request while its callback runs; afterwards reading it is a programming error. */
  private live(): uWS.HttpRequest {
    if (this.source === null) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `${this.method} ${this.path}: the request was read after its synchronous handler returned`);
    }
    return this.source;
  }

  /**
   * Called when the handler returns, still inside the uWS callback: a handler that goes on
   * asynchronously keeps a copy of the headers and the query; after a synchronous answer the
   * request is done.
   */
  detach(keepHeaders: boolean): void {
    if (this.source === null) return;
    if (keepHeaders) {
      this.rawQueryText();
      const headers = new Map<string, string>();
      this.source.forEach((k, v) => headers.set(k, v));
      this.headers = headers;
    }
    this.source = null;
  }
}

