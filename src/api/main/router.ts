/**
 * A small path router for the API service. Patterns use `{name}` for one path segment and a
 * final `{name*}` for the rest of the path (counter names may contain `/`). Every GET route
 * also answers HEAD (the server sends its status and headers without the body).
 */
import { GsfError, gsfError } from '../../errors.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

export interface ApiRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  header(name: string): string;
  /** Raw request body (empty for GET). */
  body: Buffer;
}

/**
 * Query parameter `name` of `req`, or null when it is absent. Given more than once it is a 400
 * (`query parameter 'name' must be given once, got 2 values`): which of the values was meant
 * cannot be told, and reading the first (or the last) would answer a question nobody asked.
 */
export function queryParam(req: ApiRequest, name: string): string | null {
  const values = req.query.getAll(name);
  if (values.length > 1) throw gsfError('GSF_ERR_BAD_REQUEST', `query parameter '${name}' must be given once, got ${values.length} values`);
  return values.length === 0 ? null : values[0]!;
}

export interface ApiResponse {
  status: number;
  /** Objects and arrays are sent as JSON; strings as given. Never sent with 204, 304 or to HEAD. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * An answer given later by a handler on another thread, without a promise per request (no
 * executor, resolve function, reactions or microtask): the server attaches its writer while
 * the request callback runs, and the answer is written as soon as it is settled. A handler
 * that returns one has read everything it needs of the request.
 */
export class LaterResponse {
  private writer: ((r: ApiResponse) => void) | null = null;
  private settled: ApiResponse | null = null;

  /** Gives the answer; only the first one counts. */
  settle(r: ApiResponse): void {
    const writer = this.writer;
    if (writer !== null) {
      this.writer = null;
      writer(r);
    } else {
      this.settled ??= r;
    }
  }

  /** Calls `writer` once with the answer: at once when it is already settled. */
  onAnswer(writer: (r: ApiResponse) => void): void {
    if (this.settled !== null) writer(this.settled);
    else this.writer = writer;
  }
}

/** A route handler; it may also throw (or reject with) a `GsfError`, answered with its status. */
export type RouteHandler = (req: ApiRequest) => ApiResponse | Promise<ApiResponse> | LaterResponse;

interface Route {
  method: Method;
  pattern: string;
  segments: string[];
  handler: RouteHandler;
}

export type RouteMatch =
  | { kind: 'found'; handler: RouteHandler; params: Record<string, string> }
  | { kind: 'method'; allowed: string[] }
  /** A parameter of the route found is not valid percent-encoding of UTF-8 (RFC 3986 2.1). */
  | { kind: 'bad'; segment: string }
  | { kind: 'none' };

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

/** Thrown by `decode` for a segment that is not valid percent-encoding of UTF-8. */
class BadSegment {
  constructor(readonly segment: string) {}
}

function decode(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new BadSegment(segment);
  }
}

/**
 * Told of a request the server refused before any handler ran (401, 404, 405, 413, 414), with
 * its headers (read while the request is valid).
 */
export type RefusalWatcher = (method: string, path: string, status: number, header: (name: string) => string) => void;

export class Router {
  private readonly routes: Route[] = [];
  private readonly watchers: Array<{ prefix: string; watcher: RefusalWatcher }> = [];
  /** Recent matches by method, then path: operators and dashboards poll the same few paths. */
  private readonly cache = new Map<string, Map<string, RouteMatch>>();

  /** Calls `watcher` for each refusal of a path under `prefix`; returns the call that stops it. */
  watchRefusals(prefix: string, watcher: RefusalWatcher): () => void {
    const entry = { prefix, watcher };
    this.watchers.push(entry);
    return () => {
      const i = this.watchers.indexOf(entry);
      if (i >= 0) this.watchers.splice(i, 1);
    };
  }

  /** The server refused a request before any handler: tells the watchers of its path. */
  refused(method: string, path: string, status: number, header: (name: string) => string): void {
    for (const { prefix, watcher } of this.watchers) if (path.startsWith(prefix)) watcher(method, path, status, header);
  }

  /** Adds a route; later routes with the same pattern and method are errors. */
  add(method: Method, pattern: string, handler: RouteHandler): void {
    if (this.routes.some((r) => r.method === method && r.pattern === pattern)) {
      throw new Error(`route ${method} ${pattern} is already registered`);
    }
    this.routes.push({ method, pattern, segments: split(pattern), handler });
    this.cache.clear();
  }

  /** Removes a route (a plugin reload drops the routes its new version no longer declares); true if it was there. */
  remove(method: Method, pattern: string): boolean {
    const at = this.routes.findIndex((r) => r.method === method && r.pattern === pattern);
    if (at < 0) return false;
    this.routes.splice(at, 1);
    this.cache.clear();
    return true;
  }

  /** Every route as `[method, pattern]`, in the order added (route conflict checks read them). */
  list(): Array<[Method, string]> {
    return this.routes.map((r) => [r.method, r.pattern]);
  }

  get(pattern: string, handler: RouteHandler): void { this.add('GET', pattern, handler); }
  post(pattern: string, handler: RouteHandler): void { this.add('POST', pattern, handler); }
  put(pattern: string, handler: RouteHandler): void { this.add('PUT', pattern, handler); }

  /** Finds the handler for a request (HEAD finds GET routes); literal segments win over parameters. */
  match(method: string, path: string): RouteMatch {
    let byPath = this.cache.get(method);
    if (byPath === undefined) {
      if (this.cache.size >= 16) this.cache.clear(); // clients may send any method name
      byPath = new Map();
      this.cache.set(method, byPath);
    }
    let m = byPath.get(path);
    if (m === undefined) {
      m = this.matchUncached(method, path);
      if (byPath.size >= 1024) byPath.clear();
      byPath.set(path, m);
    }
    return m;
  }

  private matchUncached(method: string, path: string): RouteMatch {
    const parts = split(path);
    const wanted = method === 'HEAD' ? 'GET' : method;
    let best: { route: Route; params: Record<string, string>; score: number } | null = null;
    const allowed = new Set<string>();
    for (const route of this.routes) {
      let params: Record<string, string> | null;
      try {
        params = matchSegments(route.segments, parts);
      } catch (err) {
        if (!(err instanceof BadSegment)) throw err;
        if (route.method === wanted) return { kind: 'bad', segment: err.segment };
        params = {};
      }
      if (params === null) continue;
      allowed.add(route.method);
      if (route.method === 'GET') allowed.add('HEAD');
      if (route.method !== wanted) continue;
      const score = route.segments.filter((s) => !s.startsWith('{')).length;
      if (best === null || score > best.score) best = { route, params, score };
    }
    if (best) return { kind: 'found', handler: best.route.handler, params: best.params };
    if (allowed.size > 0) return { kind: 'method', allowed: [...allowed].sort() };
    return { kind: 'none' };
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const seg = pattern[i]!;
    if (seg.startsWith('{') && seg.endsWith('*}')) {
      if (i >= parts.length) return null;
      params[seg.slice(1, -2)] = parts.slice(i).map(decode).join('/');
      return params;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (seg.startsWith('{') && seg.endsWith('}')) params[seg.slice(1, -1)] = decode(part);
    else if (seg !== part) return null;
  }
  return parts.length === pattern.length ? params : null;
}

/** The JSON error body every gsf route uses (for listeners that build answers by hand). */
export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { error: code, message, ...extra };
}

/** The answer for a `GsfError` with an HTTP status: that status and `{error, message, ...details}`. */
export function errorResponse(err: GsfError, headers?: Record<string, string>): ApiResponse {
  return { status: err.status, body: err.toBody(), headers };
}
