/**
 * The API-service listener (component `ApiService`) on uWebSockets.js: REST groups add their
 * routes to its router; it reads bodies with a size limit and answers JSON errors for
 * unknown paths (404), wrong methods (405), big bodies (413) and failing handlers (500).
 */
import uWS from 'uWebSockets.js';
import { timingSafeEqual } from 'node:crypto';
import { describeError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import { Router, errorBody, type ApiRequest, type ApiResponse } from './router.ts';

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
  private listenSocket: uWS.us_listen_socket | null = null;
  private boundPort = 0;

  constructor(private readonly options: ApiServerOptions) {
    this.app.any('/*', (res, req) => this.onRequest(res, req));
  }

  /** The port actually bound (after `listen`, also when 0 was asked). */
  get port(): number {
    return this.boundPort;
  }

  listen(): Promise<number> {
    const { address, port } = this.options;
    return new Promise((resolve, reject) => {
      this.app.listen(address, port, (socket) => {
        if (!socket) {
          reject(new Error(`ApiService: cannot listen on ${address}:${port}`));
          return;
        }
        this.listenSocket = socket;
        this.boundPort = uWS.us_socket_local_port(socket);
        resolve(this.boundPort);
      });
    });
  }

  close(): void {
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
  }

  private onRequest(res: uWS.HttpResponse, req: uWS.HttpRequest): void {
    // uWS request objects are only valid synchronously: copy what handlers need now.
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = new URLSearchParams(req.getQuery() ?? '');
    const headers = new Map<string, string>();
    req.forEach((k, v) => headers.set(k, v));
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    const send = (r: ApiResponse): void => {
      if (!aborted) res.cork(() => writeResponse(res, r));
    };

    const token = this.options.token ?? '';
    if (token !== '') {
      const auth = headers.get('authorization') ?? '';
      const presented = auth.startsWith('Bearer ') ? auth.slice(7) : path.startsWith('/dashboard') ? query.get('token') ?? '' : '';
      if (!tokenMatches(presented, token)) {
        send({ status: 401, headers: { 'WWW-Authenticate': 'Bearer' }, body: errorBody('GSF_ERR_UNAUTHORIZED', 'missing or invalid bearer token') });
        return;
      }
    }
    const match = this.router.match(method, path);
    if (match.kind === 'none') {
      send({ status: 404, body: errorBody('GSF_ERR_NOT_FOUND', `no route for ${method} ${path}`) });
      return;
    }
    if (match.kind === 'method') {
      send({
        status: 405, headers: { Allow: match.allowed.join(', ') },
        body: errorBody('GSF_ERR_METHOD_NOT_ALLOWED', `method ${method} not allowed for ${path}`, { allowed: match.allowed }),
      });
      return;
    }
    const limit = this.options.maxBodyBytes;
    const tooBig = (): ApiResponse => ({ status: 413, body: errorBody('GSF_ERR_BODY_TOO_LARGE', `request body exceeds ${limit} bytes`) });
    const declared = Number(headers.get('content-length') ?? '0');
    if (declared > limit) {
      send(tooBig());
      return;
    }
    const run = (body: Buffer): void => {
      const request: ApiRequest = { method, path, params: match.params, query, header: (n) => headers.get(n.toLowerCase()) ?? '', body };
      Promise.resolve()
        .then(() => match.handler(request))
        .then(send, (err: unknown) => {
          this.options.log.error(`GSF_ERR_INTERNAL: ${method} ${path} failed: ${describeError(err)}`);
          send({ status: 500, body: errorBody('GSF_ERR_INTERNAL', `internal error: ${describeError(err)}`) });
        });
    };
    if (method === 'GET' || method === 'HEAD') {
      run(Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let rejected = false;
    res.onData((chunk, isLast) => {
      if (rejected) return;
      size += chunk.byteLength;
      if (size > limit) {
        rejected = true;
        send(tooBig());
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) run(Buffer.concat(chunks));
    });
  }
}

function writeResponse(res: uWS.HttpResponse, r: ApiResponse): void {
  res.writeStatus(`${r.status} ${STATUS_TEXT[r.status] ?? ''}`.trim());
  for (const [k, v] of Object.entries(r.headers ?? {})) res.writeHeader(k, v);
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
