/**
 * Counters REST (SPEC 4.4):
 *   GET /v1/counters/                                   {"categories": [...]}
 *   GET /v1/counters/{category}/[?values=true]          {"category", "counters": [...], "values"?: {...}}
 *   GET /v1/counters/{category}/{counter}/              {"category", "counter", "value"} | 204
 *   GET /v1/counters/{category}/{counter}/description/  {"category", "counter", "description"}
 * Category and counter names may contain `/`: the longest known category prefix wins.
 */
import { gsfError } from '../../errors.ts';
import { queryParam, type ApiRequest, type ApiResponse, type Router } from './router.ts';
import type { CounterReading, CounterRegistry, LayoutStamp } from '../../counters/registry.ts';

/** How a counter path splits into category and counter, with the JSON text before the value. */
interface Resolved {
  stamp: LayoutStamp;
  read: () => CounterReading | null;
  prefix: string;
  /** The last answer and the value it carried: an unchanged value is answered without encoding. */
  last: ApiResponse | null;
  lastValue: number | string | undefined;
}

const NO_CONTENT: ApiResponse = { status: 204 };
const RESOLVED_LIMIT = 1024;

/** `{"category", "counter", "value"}` as JSON text, built around the cached prefix. */
function counterResponse(r: Resolved, value: number | string): ApiResponse {
  if (r.last !== null && r.lastValue === value) return r.last;
  const text = typeof value === 'string' ? JSON.stringify(value) : Number.isFinite(value) ? String(value) : 'null';
  r.last = { status: 200, body: r.prefix + text + '}', contentType: 'application/json' };
  r.lastValue = value;
  return r.last;
}

function readingResponse(r: Resolved, value: CounterReading | null): ApiResponse | null {
  if (value === null) return null;
  return value === undefined ? NO_CONTENT : counterResponse(r, value);
}

function notFound(message: string): never {
  throw gsfError('GSF_ERR_COUNTER_NOT_FOUND', message);
}

/** The longest registered category that `segments` starts with, or null. */
function longestCategory(registry: CounterRegistry, segments: string[]): string | null {
  for (let i = segments.length; i >= 1; i--) {
    const category = segments.slice(0, i).join('/');
    if (registry.list(category) !== null) return category;
  }
  return null;
}

export function registerCounterRoutes(router: Router, registry: CounterRegistry): void {

  // Dashboards and scrapers poll the same few counters: each path's split is cached and
  // checked against the registry's layout stamp (a new category can change the longest match).
  // A cached split whose counter is removed reads as null and is resolved again.
  const resolved = new Map<string, Resolved>();

  /** A category's counters and their values, from one reading (null: no such category). */
  const categoryListing = (category: string): ApiResponse | null => {
    // One reading of the category, names and values alike: a built-in table is built once, a
    // failing callback is null.
    const read = registry.reading(category);
    if (read === null) return null;
    const values: Record<string, unknown> = {};
    for (const name of read.names) {
      // Defined, not assigned: a counter named `__proto__` (a plugin may name counters after
      // player data) would otherwise set the object's prototype and be left out.
      Object.defineProperty(values, name, { value: read.values.get(name) ?? null, enumerable: true, writable: true, configurable: true });
    }
    return { status: 200, body: { category, counters: read.names, values } };
  };

  /**
   * `?values=`: true or 1 lists a category, false, 0 or absent reads a counter. Anything else
   * is a 400 rather than a quiet "no": `values=yes` would otherwise read a counter the caller
   * did not ask for, or answer 404 for a category that exists.
   */
  const valuesAsked = (req: ApiRequest): boolean => {
    const value = queryParam(req, 'values');
    if (value === null || value === 'false' || value === '0') return false;
    if (value === 'true' || value === '1') return true;
    throw gsfError('GSF_ERR_BAD_REQUEST', `values must be true or false (got '${value}')`);
  };

  // The list of categories takes `values` as every counters path does: a bad one is refused here too.
  router.get('/v1/counters', (req) => {
    valuesAsked(req);
    return { status: 200, body: { categories: registry.categories() } };
  });

  router.get('/v1/counters/{path*}', (req) => {
    const path = req.params.path!;
    // `?values=true` asks for a category: one named like a counter of a shorter category
    // (`pp/sub` beside the counter `sub` of `pp`) is listed rather than that counter read.
    if (valuesAsked(req)) {
      const listing = categoryListing(path);
      if (listing !== null) return listing;
    }
    const hit = resolved.get(path);
    if (hit !== undefined && registry.isCurrent(hit.stamp)) {
      const response = readingResponse(hit, hit.read());
      if (response !== null) return response;
    }
    const stamp = registry.stamp();
    // Empty segments come only from '%2F' (the router drops those of the URL): an event
    // named 'trail/' has the counter 'trail//all_time/execution_count'.
    const segments = path.split('/');
    // A counter read, trying the longest category first, without listing anything. The split
    // is cached only when no longer candidate category exists: a counter added to one later
    // would take the path over without changing the stamp.
    let longerExists = false;
    for (let i = segments.length - 1; i >= 1; i--) {
      const category = segments.slice(0, i).join('/');
      const counter = segments.slice(i).join('/');
      const read = registry.reader(category, counter);
      const value = read === null ? null : read();
      if (read === null || value === null) {
        longerExists ||= registry.hasCategory(category);
        continue;
      }
      const prefix = `{"category":${JSON.stringify(category)},"counter":${JSON.stringify(counter)},"value":`;
      const r: Resolved = { stamp, read, prefix, last: null, lastValue: undefined };
      if (!longerExists) {
        if (resolved.size >= RESOLVED_LIMIT) resolved.clear();
        resolved.set(path, r);
      }
      return readingResponse(r, value)!;
    }
    const whole = segments.join('/');
    const counters = registry.list(whole);
    if (counters !== null) return { status: 200, body: { category: whole, counters } };
    if (segments[segments.length - 1] === 'description') {
      for (let i = segments.length - 2; i >= 1; i--) {
        const category = segments.slice(0, i).join('/');
        const counter = segments.slice(i, -1).join('/');
        const description = registry.describe(category, counter);
        if (description !== null) return { status: 200, body: { category, counter, description } };
      }
    }
    const category = longestCategory(registry, segments);
    if (category === null) return notFound(`no counter category '${whole}'`);
    return notFound(`no counter '${segments.slice(category.split('/').length).join('/')}' in category '${category}'`);
  });
}
