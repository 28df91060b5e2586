/**
 * Component `DeployApiService`: the operations-console API under `/cs-api/v1/` (SPEC 4.6) on the
 * API-service listener, with its token, body limit and error form. One side's registrations
 * serve: managed plugins' (`deploy_api_service_use_managed` true, the default) or native
 * plugins'; the other side's are ignored, which one INFO line at start says.
 *
 * Each request is checked here first (the operation implemented, paging, editable fields,
 * giftable items, categories, custom query fields): a refused request never reaches a handler.
 * Then it runs as an event named `cs-api.<Operation>` on the tag of the account or character
 * its path names (`api.tags.named('account:<id>')`, `'character:<id>'`), or a random tag.
 *
 * What is implemented and every rule is read from the registry at each request, and the custom
 * query routes follow it: a plugin reload replaces the plugin's registrations at its switch
 * (registry-swap.ts), and the next request sees the new ones.
 */
import { answersAsItself, gsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import { namedTag, randomTag } from '../events/tags.ts';
import type { Feature, FeatureContext, RunningFeature } from '../features.ts';
import { handlerServices, jsonBody, queryObject, releaseHandlerServices, type HandlerServices } from '../api/main/dispatch.ts';
import { LaterResponse, type ApiRequest, type ApiResponse, type RouteHandler, type Router } from '../api/main/router.ts';
import { createLineLimiter, type LineLimiter } from '../log/rate-limit.ts';
import { DEFAULT_NOTICE_CATEGORY, OPERATIONS, type ArgsContext, type ConsoleOperation } from './operations.ts';
import { onPluginSwap } from '../hooks/reload-hooks.ts';
import { consoleRegistry, operationKey, type ConsoleSide, type CustomQuery } from './registry.ts';
import { bad, bodyObject, Fields } from './requests.ts';
import { AuditTrail, auditRoute, isChange, OPERATOR_HEADER, operatorName, operatorOf } from './audit-trail.ts';
import { storableText } from '../text.ts';

const V1 = '/cs-api/v1';
type ConsoleRouter = Pick<Router, 'add' | 'get' | 'post' | 'remove'>;

/** Named tags of recent accounts and characters: a console keeps asking about the same few. */
const tags = new Map<string, number>();

function tagOf(name: string): number {
  let tag = tags.get(name);
  if (tag === undefined) {
    if (tags.size >= 10_000) tags.clear();
    tag = namedTag(name);
    tags.set(name, tag);
  }
  return tag;
}

/** The tag an operation runs on: the named account or character's, else a random one. */
export function operationTag(op: ConsoleOperation, req: ApiRequest): number {
  if (op.tag === 'account') return tagOf(`account:${req.params.id}`);
  if (op.tag === 'character') return tagOf(`character:${req.params.id}`);
  return randomTag();
}

function describeSide(side: ConsoleSide): string {
  return side.plugins.size === 0 ? `no ${side.name} plugin registers any` : `plugin(s) ${[...side.plugins].join(', ')}`;
}

const sorted = (s: Iterable<string>): string[] => [...s].sort();

/** Registry reads a console renders choices from; answered here, no handler runs. */
function metaRoutes(router: ConsoleRouter, side: ConsoleSide): void {
  const ok = (body: unknown): ApiResponse => ({ status: 200, body });
  router.get(`${V1}/editable-fields`, () => ok({ account: sorted(side.editableUser), character: sorted(side.editableCharacter) }));
  router.get(`${V1}/item/giftable`, () => ok([...side.giftable].map(([item_id, name]) => ({ item_id, name }))));
  router.get(`${V1}/notice/categories`, () => ok([DEFAULT_NOTICE_CATEGORY, ...sorted(side.noticeCategories)]));
  router.get(`${V1}/mission/categories`, () => ok({ normal: sorted(side.missionNormal), achievement: sorted(side.missionAchievement) }));
  router.get(`${V1}/campaign/types`, () => ok(sorted(side.campaigns.keys())));
  router.get(`${V1}/custom-queries`, () => ok([...side.queries.values()].map((q) => ({
    name: q.name, method: q.method, uri: q.uri, path: `${q.path}/`, request_fields: q.requestFields, response_fields: q.responseFields,
  }))));
}

function campaignRoutes(router: ConsoleRouter, side: ConsoleSide, services: HandlerServices): void {
  for (const phase of ['begin', 'end'] as const) {
    const name = phase === 'begin' ? 'BeginCampaign' : 'EndCampaign';
    router.post(`${V1}/campaign/{type}/${phase}`, (req) => {
      const type = req.params.type!;
      const entry = side.campaigns.get(type);
      if (!entry) throw gsfError('GSF_ERR_NOT_IMPLEMENTED', `campaign type '${type}'`, side.name);
      const campaign = bodyObject(req);
      new Fields(campaign).nonEmpty('campaign_id');
      return services.dispatch({
        key: entry[phase], tag: randomTag(), name: `cs-api.${name}`, method: req.method, path: req.path, audit: 'cs-api',
        operator: operatorOf(req), native: side.name === 'native', args: { type, campaign },
      });
    });
  }
}

/**
 * Mounts the side's custom queries and returns the function that mounts them again after a
 * plugin reload: added queries get a route, removed ones lose theirs, changed ones are remounted.
 */
function queryRoutes(router: ConsoleRouter, side: ConsoleSide, services: HandlerServices, lines: LineLimiter): () => void {
  const mounted = new Map<string, CustomQuery>();
  const mount = (q: CustomQuery): void => {
    router.add(q.method, q.path, (req) => {
      const given = q.method === 'GET' ? queryObject(req) : jsonBody(req) ?? {};
      if (typeof given !== 'object' || given === null || Array.isArray(given)) throw bad('request body must be a JSON object');
      const fields = given as Record<string, unknown>;
      const missing = q.requestFields.filter((f) => fields[f] === undefined);
      if (missing.length > 0) {
        const message = `custom query '${q.name}' needs request field(s) ${missing.join(', ')}`;
        lines.error(q.key, `GSF_ERR_BAD_REQUEST: ${req.method} ${req.path}: ${message}; its handler was not called`);
        throw bad(message);
      }
      if (q.responseFields === null) {
        lines.warn(q.key, `custom query '${q.name}' (${q.method} ${q.path}/) declares no response fields; its answer is sent as it is`);
      }
      return services.dispatch({
        key: q.key, tag: randomTag(), name: `cs-api.CustomQuery.${q.uri.replace(/\//g, '.')}`, method: req.method, path: req.path,
        audit: 'cs-api', operator: isChange(req.method) ? operatorOf(req) : '', native: side.name === 'native', args: { fields },
      });
    });
  };
  const sync = (): void => {
    for (const [key, q] of [...mounted]) {
      if (side.queries.get(key) === q) continue;
      router.remove(q.method, q.path);
      mounted.delete(key);
    }
    for (const [key, q] of side.queries) {
      if (mounted.has(key)) continue;
      mount(q);
      mounted.set(key, q);
    }
  };
  sync();
  return sync;
}

/**
 * Every console request writes one audit line: the ones handed to a handler when their answer
 * is written (PendingRequests), the ones answered here (refusals, registry reads) at once.
 * Changes (every method but GET and HEAD) also enter the audit trail when they are answered.
 */
function audited(log: Logger, trail: AuditTrail, handler: RouteHandler): RouteHandler {
  // No closure per request: the loader names each one with a defineProperty call.
  return (req) => {
    const start = performance.now();
    if (isChange(req.method)) return change(log, trail, handler, req, start);
    let result: ReturnType<RouteHandler>;
    try {
      result = handler(req);
    } catch (err) {
      auditLine(log, req, statusOf(err), start, '');
      throw err;
    }
    // Answers given later are audited when they are written (PendingRequests).
    if (!(result instanceof Promise) && !(result instanceof LaterResponse)) auditLine(log, req, result.status, start, '');
    return result;
  };
}

const statusOf = (err: unknown): number => (answersAsItself(err) ? err.status : 500);

/** A change: audited like any request, and entered in the trail once its answer is known. */
function change(log: Logger, trail: AuditTrail, handler: RouteHandler, req: ApiRequest, start: number): ReturnType<RouteHandler> {
  const { method, path } = req;
  let operator = '';
  let result: ReturnType<RouteHandler>;
  try {
    operator = operatorOf(req);
    result = handler(req);
  } catch (err) {
    auditLine(log, req, statusOf(err), start, operator);
    trail.record(operator, method, path, statusOf(err), performance.now() - start);
    throw err;
  }
  if (result instanceof LaterResponse) {
    // PendingRequests writes the line; the trail takes the answer on its way to the client.
    const later = new LaterResponse();
    result.onAnswer((r) => {
      trail.record(operator, method, path, r.status, performance.now() - start);
      later.settle(r);
    });
    return later;
  }
  if (result instanceof Promise) {
    return result.then(
      (r) => { trail.record(operator, method, path, r.status, performance.now() - start); return r; },
      (err: unknown) => { trail.record(operator, method, path, statusOf(err), performance.now() - start); throw err; },
    );
  }
  auditLine(log, req, result.status, start, operator);
  trail.record(operator, method, path, result.status, performance.now() - start);
  return result;
}

function auditLine(log: Logger, req: ApiRequest, status: number, start: number, operator: string): void {
  const who = operator === '' ? '' : `, operator=${JSON.stringify(operator)}`;
  log.info(`cs-api audit: method=${req.method}, path=${req.path}, status=${status}, duration_in_ms=${(performance.now() - start).toFixed(3)}${who}`);
}

/**
 * A console request the API server refused before any route ran (a wrong token, an unknown
 * path, a method the path does not take, a body or path over the limit): audited like the
 * others, and entered in the trail when it was a change.
 */
function refusedLine(log: Logger, trail: AuditTrail, method: string, path: string, status: number, header: (name: string) => string): void {
  let operator = '';
  try {
    operator = operatorName(header(OPERATOR_HEADER));
  } catch {
    // A name the console would refuse is left out: the request was refused anyway.
  }
  const who = operator === '' ? '' : `, operator=${JSON.stringify(operator)}`;
  log.info(`cs-api audit: method=${method}, path=${path}, status=${status}, duration_in_ms=0.000${who}`);
  if (isChange(method)) trail.record(operator, method, path, status, 0);
}

/**
 * Path values of a change (ids, names, an edited field's value) are text a handler stores: one
 * holding NUL or an unpaired surrogate is a 400 before any handler runs (no store keeps it, and
 * the handler would fail with a 500). A read of such an id simply finds nothing (404).
 */
function textParams(handler: RouteHandler): RouteHandler {
  return (req) => {
    if (isChange(req.method)) for (const [name, value] of Object.entries(req.params)) {
      if (!storableText(value)) throw bad(`path parameter '${name}' must be text without NUL or unpaired surrogates`);
    }
    return handler(req);
  };
}

/** The console's router: every route added through it is audited, its path values checked. */
function auditedRouter(router: Router, log: Logger, trail: AuditTrail): ConsoleRouter {
  const wrap = (handler: RouteHandler): RouteHandler => audited(log, trail, textParams(handler));
  return {
    remove: (method, pattern) => router.remove(method, pattern),
    add: (method, pattern, handler) => router.add(method, pattern, wrap(handler)),
    get: (pattern, handler) => router.add('GET', pattern, wrap(handler)),
    post: (pattern, handler) => router.add('POST', pattern, wrap(handler)),
  };
}

function start({ manifest, thread, dispatcher, api }: FeatureContext): RunningFeature | void {
  if (!manifest.listed.has('DeployApiService')) return;
  const args = manifest.components.DeployApiService!;
  const registry = consoleRegistry(thread.runtime);
  const managed = args.deploy_api_service_use_managed as boolean;
  const side = managed ? registry.managed : registry.native;
  const other = managed ? registry.native : registry.managed;
  thread.log.info(`DeployApiService: the ${side.name} console handlers serve /cs-api/v1/ (${describeSide(side)}); ` +
    `the ${other.name} ones are ignored (${describeSide(other)})`);
  const services = handlerServices(thread.runtime, dispatcher, manifest.components.ApiService!.api_service_handler_timeout_in_ms as number, thread.log);
  const lines = createLineLimiter({ perKeyPerSecond: 5, log: thread.log });
  const ctx: ArgsContext = { rules: side, maxPageSize: args.deploy_api_max_page_size as number, logError: (line) => lines.error('gate', line) };
  const trail = new AuditTrail();
  const router = auditedRouter(api.router, thread.log, trail);
  for (const op of OPERATIONS) {
    const key = operationKey(side.name, op.name);
    const name = `cs-api.${op.name}`;
    for (const path of op.paths) {
      router.add(op.http, path, (req) => {
        if (!side.operations.has(op.name)) throw gsfError('GSF_ERR_NOT_IMPLEMENTED', `operation ${op.name}`, side.name);
        const opArgs = op.args(req, ctx);
        return services.dispatch({
          key, tag: operationTag(op, req), name, method: req.method, path: req.path, audit: 'cs-api',
          operator: op.http === 'GET' ? '' : operatorOf(req), native: side.name === 'native', args: opArgs,
        });
      });
    }
  }
  campaignRoutes(router, side, services);
  const unsubscribe = onPluginSwap(queryRoutes(router, side, services, lines));
  metaRoutes(router, side);
  router.get(`${V1}/audit`, auditRoute(trail, ctx.maxPageSize));
  const unwatch = api.router.watchRefusals('/cs-api/', (method, path, status, header) => refusedLine(thread.log, trail, method, path, status, header));
  return {
    stop() {
      unwatch();
      unsubscribe();
      lines.close();
      releaseHandlerServices(dispatcher);
    },
  };
}

export const consoleFeature: Feature = { name: 'deploy-api', start };
