/**
 * REST routes of plugins on the API service (`api.http.route`, and `register_route` of native
 * plugins). Every thread registers the same routes; on event threads a route is an API target,
 * on the main thread the feature mounts it on the API router once gsf's own routes are there.
 * A route's handler runs as an `_gsf.api` event with a random tag (SPEC 6.2.4b) and answers
 * through a response writer of any kind.
 *
 * Conflicts stop the start naming both sides: two plugins' routes some path would match with
 * the same method, or a plugin route and one of gsf's. `/cs-api/` belongs to the console.
 *
 * A plugin reload registers the new version's routes apart (staging), refuses them on the same
 * conflicts (`routeClash`), and at the switch puts them in the list in place of the old ones;
 * the feature then mounts what was added and unmounts what was removed.
 */
import { answersAsItself, gsfError } from '../errors.ts';
import type { EventRuntime } from '../events/runtime.ts';
import { randomTag } from '../events/tags.ts';
import type { Feature, RunningFeature } from '../features.ts';
import { onPluginSwap } from '../hooks/reload-hooks.ts';
import { apiTargets, type ApiTarget } from './api-event.ts';
import { handlerServices, jsonBody, queryObject, releaseHandlerServices, type HandlerServices } from './main/dispatch.ts';
import { Router } from './main/router.ts';
import { overlaps, parsePattern, routeLabel, ROUTE_METHODS, segmentsOf, type RouteMethod } from './route-patterns.ts';
import { AnswerKind } from './writer.ts';
import type { EventContext } from '../events/types.ts';
import type { ResponseWriter } from './writer.ts';

/** What a route handler receives. */
export interface RouteRequest<B = unknown> {
  method: string;
  /** The request path (without the query). */
  path: string;
  /** Path parameters by name (`{id}` → `params.id`), decoded. */
  params: Record<string, string>;
  /** Query parameters (the last value of a repeated one). */
  query: Record<string, string>;
  /** The JSON body, undefined when there is none (a body that is not JSON gets 400 before the handler). */
  body: B;
}

/** A plugin route's handler: runs on an event thread and answers through `res`, now or later. */
export type PluginRouteHandler<B = unknown> = (req: RouteRequest<B>, res: ResponseWriter, ctx: EventContext) => void | Promise<void>;

export interface RouteOptions {
  /** Event name (profiled); default `api.<plugin>.<METHOD>.<path words>`. */
  name?: string;
}

/** `api.http`: REST routes of a plugin on the API service. */
export interface HttpApi {
  /** Serves `METHOD path` (`{name}` segments are parameters); GET routes answer HEAD too. */
  route<B = unknown>(method: RouteMethod, path: string, handler: PluginRouteHandler<B>, options?: RouteOptions): void;
}

/** One plugin route as registered. */
export interface RouteEntry {
  plugin: string;
  method: RouteMethod;
  pattern: string;
  segments: string[];
  name: string;
  key: string;
  native: boolean;
}

const registries = new WeakMap<EventRuntime, RouteEntry[]>();

/** gsf's own routes of the API service, as the feature found them at start (reload conflict checks). */
const gsfRoutesOf = new WeakMap<EventRuntime, Array<{ method: string; pattern: string; segments: string[] }>>();

/** The plugin routes registered on a thread, in plugin order (a reload replaces a plugin's entries in place). */
export function routesOf(rt: EventRuntime): RouteEntry[] {
  let list = registries.get(rt);
  if (!list) registries.set(rt, list = []);
  return list;
}

/** The default event name of a route. */
function defaultName(plugin: string, method: string, segments: string[]): string {
  return `api.${plugin}.${method}.${segments.map((s) => s.replace(/[{}*]/g, '')).join('.')}`;
}

/**
 * Adds a route of `plugin` on this thread (managed or native): checks the method, the pattern
 * and the other plugins' routes, and makes its target.
 */
export function addRoute(rt: EventRuntime, plugin: string, method: unknown, pattern: unknown, name: unknown,
  run: ApiTarget['run'], native: boolean): void {
  const what = `plugin '${plugin}' route`;
  if (typeof method !== 'string' || !(ROUTE_METHODS as readonly string[]).includes(method)) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: method must be one of ${ROUTE_METHODS.join(', ')}, got ${JSON.stringify(method)}`);
  }
  const segments = parsePattern(pattern, what);
  const path = `/${segments.join('/')}`;
  if (segments[0] === 'cs-api') {
    throw gsfError('GSF_ERR_ROUTE_CONFLICT', plugin, routeLabel(method, path), 'the operations console, which owns /cs-api/ (register a custom query instead)');
  }
  if (name !== undefined && (typeof name !== 'string' || name === '')) throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what} ${path}: name must be a non-empty string`);
  const list = routesOf(rt);
  for (const other of list) {
    if (other.method === method && overlaps(other.segments, segments)) {
      throw gsfError('GSF_ERR_ROUTE_CONFLICT', plugin, routeLabel(method, path), `plugin '${other.plugin}' route ${routeLabel(other.method, other.pattern)}`);
    }
  }
  const key = `route:${method} ${path}`;
  list.push({ plugin, method: method as RouteMethod, pattern: path, segments, name: (name as string | undefined) ?? defaultName(plugin, method, segments), key, native });
  apiTargets(rt).set(key, { plugin, kind: AnswerKind.any, stage: 'route handler', run });
}

/** `api.http` of one plugin. */
export function createHttpApi(plugin: string, rt: EventRuntime): HttpApi {
  return {
    route(method, path, handler, options) {
      if (typeof handler !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', `plugin '${plugin}' route ${String(method)} ${String(path)}: handler must be a function`);
      addRoute(rt, plugin, method, path, options?.name, (args, res, ctx) => handler(args as RouteRequest<never>, res, ctx), false);
    },
  };
}

/**
 * The first staged route (in reload order) that overlaps a route of gsf, of a plugin not
 * reloaded, or of a plugin staged before it, with the same method; or null.
 */
export function routeClash(rt: EventRuntime, staged: ReadonlyArray<{ name: string; routes: readonly RouteEntry[] }>,
  reloaded: ReadonlySet<string>): { plugin: string; error: Error } | null {
  const taken = routesOf(rt).filter((r) => !reloaded.has(r.plugin)).map((r) => ({ ...r, label: `plugin '${r.plugin}' route` }));
  const gsf = (gsfRoutesOf.get(rt) ?? []).map((g) => ({ ...g, label: 'gsf route' }));
  for (const s of staged) {
    for (const r of s.routes) {
      const other = [...gsf, ...taken].find((o) => o.method === r.method && overlaps(o.segments, r.segments));
      if (other !== undefined) {
        return { plugin: s.name, error: gsfError('GSF_ERR_ROUTE_CONFLICT', s.name, routeLabel(r.method, r.pattern), `${other.label} ${routeLabel(other.method, other.pattern)}`) };
      }
    }
    taken.push(...s.routes.map((r) => ({ ...r, label: `plugin '${r.plugin}' route` })));
  }
  return null;
}

const NEVER_CALLED = (): never => {
  throw new Error('the routes kept to audit refusals are never served');
};

/** Mounts the plugins' routes on the API router (main thread), after gsf's own routes, and follows plugin reloads. */
export const pluginRoutesFeature: Feature = {
  name: 'plugin-routes',
  start({ manifest, thread, dispatcher, api }): RunningFeature | void {
    const rt = thread.runtime;
    const routes = routesOf(rt);
    const gsfRoutes = api.router.list().map(([method, pattern]) => ({ method, pattern, segments: segmentsOf(pattern) }));
    gsfRoutesOf.set(rt, gsfRoutes);
    for (const r of routes) {
      const clash = gsfRoutes.find((g) => g.method === r.method && overlaps(g.segments, r.segments));
      if (clash) throw gsfError('GSF_ERR_ROUTE_CONFLICT', r.plugin, routeLabel(r.method, r.pattern), `gsf route ${routeLabel(clash.method, clash.pattern)}`);
    }
    const timeout = manifest.components.ApiService!.api_service_handler_timeout_in_ms as number;
    // Made on the first route: a server whose plugins have none holds no handler services until a reload adds one.
    let services: HandlerServices | null = null;
    /** Routes on the router, by `METHOD pattern`. */
    const mounted = new Map<string, RouteEntry>();
    /**
     * The mounted routes alone: a request the server refuses before any handler (a wrong token,
     * a method the route does not take, a body over the limit, a bad path segment) is audited
     * when its path is a plugin route's, as one its handler answered is (api/main/pending.ts).
     */
    const own = new Router();
    const audit = (method: string, path: string, status: number, ms: number): void =>
      thread.log.info(`api audit: method=${method}, path=${path}, status=${status}, duration_in_ms=${ms.toFixed(3)}`);
    const sync = (): void => {
      const wanted = new Map(routesOf(rt).map((r) => [`${r.method} ${r.pattern}`, r]));
      for (const [key, r] of [...mounted]) {
        if (wanted.get(key) === r) continue;
        api.router.remove(r.method, r.pattern);
        own.remove(r.method, r.pattern);
        mounted.delete(key);
      }
      for (const [key, r] of wanted) {
        if (mounted.has(key)) continue;
        const s = services ??= handlerServices(rt, dispatcher, timeout, thread.log);
        api.router.add(r.method, r.pattern, (req) => {
          const start = performance.now();
          let args: Record<string, unknown>;
          try {
            args = { method: req.method, path: req.path, params: req.params, query: queryObject(req), body: jsonBody(req) };
          } catch (err) {
            // A query or body the route refuses (400) never reaches the handler: audited here.
            audit(req.method, req.path, answersAsItself(err) ? err.status : 500, performance.now() - start);
            throw err;
          }
          return s.dispatch({ key: r.key, tag: randomTag(), name: r.name, method: req.method, path: req.path, audit: 'api', native: r.native, args });
        });
        own.add(r.method, r.pattern, NEVER_CALLED);
        mounted.set(key, r);
      }
    };
    sync();
    const unsubscribe = onPluginSwap(sync);
    const unwatch = api.router.watchRefusals('/', (method, path, status) => {
      if (own.match(method, path).kind !== 'none') audit(method, path, status, 0);
    });
    return {
      stop() {
        unwatch();
        unsubscribe();
        if (services !== null) releaseHandlerServices(dispatcher);
      },
    };
  },
};
