/**
 * The API-service listener (component `ApiService`) on uWebSockets.js: REST groups add their
 * routes to its router; it reads bodies with a size limit and answers JSON errors for
 * unknown paths (404), wrong methods (405), big bodies (413) and failing handlers (500).
 */
import uWS from 'uWebSockets.js';
import { timingSafeEqual } from 'node:crypto';
import { listenUws, type Listening } from './listen.ts';
import { describeError, gsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import { Router, errorBody, type ApiRequest, type ApiResponse, type RouteHandler } from './router.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 413: 'Payload Too Large', 500: 'Internal Server Error',
  503: 'Service Unavailable',
};

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

export class ApiServer {
  readonly router = new Router();
  private readonly app = uWS.App();
  private listening: Listening | null = null;

  constructor(private readonly options: ApiServerOptions) {
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

  async listen(): Promise<number> {
    this.listening = await listenUws(this.app, this.options.address, this.options.port, 'ApiService');
    return this.listening.port;
  }

  close(): void {
    this.listening?.close();
  }

  private onRequest(res: uWS.HttpResponse, req: uWS.HttpRequest, method: string): void {
    // uWS request objects are only valid synchronously: a handler reads them while this callback
    // runs (see Request), and a synchronous answer is written at once (keeps uWS corking and
    // pipelining intact).
    const path = req.getUrl();
    const token = this.options.token ?? '';
    if (token !== '') {
      const auth = req.getHeader('authorization');
      const presented = auth.startsWith('Bearer ') ? auth.slice(7)
        : path.startsWith('/dashboard') ? new URLSearchParams(req.getQuery() ?? '').get('token') ?? '' : '';
      if (!tokenMatches(presented, token)) {
        writeResponse(res, UNAUTHORIZED);
        return;
      }
    }
    const match = this.router.match(method, path);
    if (match.kind === 'none') {
      writeResponse(res, { status: 404, body: errorBody('GSF_ERR_NOT_FOUND', `no route for ${method} ${path}`) });
      return;
    }
    if (match.kind === 'method') {
      writeResponse(res, {
        status: 405, headers: { Allow: match.allowed.join(', ') },
        body: errorBody('GSF_ERR_METHOD_NOT_ALLOWED', `method ${method} not allowed for ${path}`, { allowed: match.allowed }),
      });
      return;
    }
    if (method === 'GET' || method === 'HEAD') {
      // Headers are read from uWS while the callback runs, and copied only if the handler goes async.
      this.dispatch(res, match.handler, new Request(method, path, match.params, null, req, EMPTY), null);
      return;
    }
    const rawQuery = req.getQuery() ?? '';
    const headers = new Map<string, string>();
    req.forEach((k, v) => headers.set(k, v));
    const limit = this.options.maxBodyBytes;
    if (Number(headers.get('content-length') ?? '0') > limit) {
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
    let result: ApiResponse | Promise<ApiResponse>;
    try {
      result = handler(request);
    } catch (err) {
      result = this.failure(request, err);
    }
    request.detach(result instanceof Promise);
    if (!(result instanceof Promise)) {
      if (state === null) writeResponse(res, result);
      else if (!state.aborted) res.cork(() => writeResponse(res, result));
      return;
    }
    const live = state ?? { aborted: false };
    if (state === null) res.onAborted(() => { live.aborted = true; });
    result.then(
      (r) => { if (!live.aborted) res.cork(() => writeResponse(res, r)); },
      (err: unknown) => {
        const r = this.failure(request, err);
        if (!live.aborted) res.cork(() => writeResponse(res, r));
      },
    );
  }

  private failure(request: Request, err: unknown): ApiResponse {
    this.options.log.error(`GSF_ERR_INTERNAL: ${request.method} ${request.path} failed: ${describeError(err)}`);
    return { status: 500, body: errorBody('GSF_ERR_INTERNAL', `internal error: ${describeError(err)}`) };
  }
}

const EMPTY = Buffer.alloc(0);
const UNAUTHORIZED: ApiResponse = {
  status: 401, headers: { 'WWW-Authenticate': 'Bearer' }, body: errorBody('GSF_ERR_UNAUTHORIZED', 'missing or invalid bearer token'),
};

function tooBig(limit: number): ApiResponse {
  return { status: 413, body: errorBody('GSF_ERR_BODY_TOO_LARGE', `request body exceeds ${limit} bytes`) };
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

  get query(): URLSearchParams {
    this.parsedQuery ??= new URLSearchParams(this.rawQueryText());
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

const STATUS_LINES = new Map<number, string>();

function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_TEXT[status] ?? ''}`.trim();
    STATUS_LINES.set(status, line);
  }
  return line;
}

function writeResponse(res: uWS.HttpResponse, r: ApiResponse): void {
  res.writeStatus(statusLine(r.status));
  if (r.headers !== undefined) for (const k in r.headers) res.writeHeader(k, r.headers[k]!);
  if (r.status === 204 || r.body === undefined) {
    res.end();
    return;
  }
  if (typeof r.body === 'string' || Buffer.isBuffer(r.body)) {
    res.writeHeader('Content-Type', r.contentType ?? 'text/plain; charset=utf-8');
    res.end(r.body);
    return;
  }
  res.writeHeader('Content-Type', r.contentType ?? 'application/json');
  res.end(JSON.stringify(r.body));
}
