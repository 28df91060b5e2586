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

/** The longest registered category that `segments` starts with, or null. */
function longestCategory(registry: CounterRegistry, segments: string[]): string | null {
  for (let i = segments.length; i >= 1; i--) {
    const category = segments.slice(0, i).join('/');
    if (registry.list(category) !== null) return category;
  }
  return null;
}

export function registerCounterRoutes(router: Router, registry: CounterRegistry): void {
  router.get('/v1/counters', () => ({ status: 200, body: { categories: registry.categories() } }));

  router.get('/v1/counters/{path*}', (req) => {
    const segments = req.params.path!.split('/').filter((s) => s !== '');
    // Hot path first: a counter read, trying the longest category first, without listing anything.
    for (let i = segments.length - 1; i >= 1; i--) {
      const category = segments.slice(0, i).join('/');
      const counter = segments.slice(i).join('/');
      const value = registry.read(category, counter);
      if (value === undefined) return { status: 204 };
      if (value !== null) return { status: 200, body: { category, counter, value } };
    }
    const whole = segments.join('/');
    const counters = registry.list(whole);
    if (counters !== null) {
      const wantValues = ['true', '1'].includes(req.query.get('values') ?? '');
      if (!wantValues) return { status: 200, body: { category: whole, counters } };
      const values: Record<string, unknown> = {};
      for (const name of counters) values[name] = registry.read(whole, name) ?? null;
      return { status: 200, body: { category: whole, counters, values } };
    }
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
