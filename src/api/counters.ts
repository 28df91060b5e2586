/**
 * Counters REST (SPEC 4.4):
 *   GET /v1/counters/                                   {"categories": [...]}
 *   GET /v1/counters/{category}/[?values=true]          {"category", "counters": [...], "values"?: {...}}
 *   GET /v1/counters/{category}/{counter}/              {"category", "counter", "value"} | 204
 *   GET /v1/counters/{category}/{counter}/description/  {"category", "counter", "description"}
 * Category and counter names may contain `/`: the longest known category prefix wins.
 */
import { errorBody, type ApiResponse, type Router } from './router.ts';
import type { CounterRegistry } from '../counters/registry.ts';

function notFound(message: string): ApiResponse {
  return { status: 404, body: errorBody('GSF_ERR_COUNTER_NOT_FOUND', message) };
}

/** Splits `a/b/c/d` into the longest registered category and the rest. */
function resolve(registry: CounterRegistry, segments: string[]): { category: string; counter: string } | null {
  for (let i = segments.length; i >= 1; i--) {
    const category = segments.slice(0, i).join('/');
    if (registry.list(category) !== null) return { category, counter: segments.slice(i).join('/') };
  }
  return null;
}

export function registerCounterRoutes(router: Router, registry: CounterRegistry): void {
  router.get('/v1/counters', () => ({ status: 200, body: { categories: registry.categories() } }));

  router.get('/v1/counters/{path*}', (req) => {
    const segments = req.params.path!.split('/').filter((s) => s !== '');
    const found = resolve(registry, segments);
    if (!found) return notFound(`no counter category '${segments.join('/')}'`);
    const { category, counter } = found;
    if (counter === '') {
      const counters = registry.list(category)!;
      const wantValues = ['true', '1'].includes(req.query.get('values') ?? '');
      if (!wantValues) return { status: 200, body: { category, counters } };
      const values: Record<string, unknown> = {};
      for (const name of counters) values[name] = registry.read(category, name) ?? null;
      return { status: 200, body: { category, counters, values } };
    }
    const value = registry.read(category, counter);
    if (value !== null) {
      if (value === undefined) return { status: 204 };
      return { status: 200, body: { category, counter, value } };
    }
    if (segments[segments.length - 1] === 'description') {
      const name = counter.split('/').slice(0, -1).join('/');
      const description = name === '' ? null : registry.describe(category, name);
      if (description !== null) return { status: 200, body: { category, counter: name, description } };
    }
    return notFound(`no counter '${counter}' in category '${category}'`);
  });
}
