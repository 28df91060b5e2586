/**
 * Counters computed on read (main thread): cache figures in `object`, means in
 * `object_database_stat`, and cached objects per type in `engine_object_model`.
 */
import { native } from '../native.ts';
import type { CounterRegistry } from '../counters/registry.ts';
import { DB_STAT, DbCounter, OBJECT } from './stats.ts';
import type { ObjectSchema } from './schema.ts';

export const MODEL = 'engine_object_model';

function callable(registry: CounterRegistry, category: string, name: string, description: string, fn: () => number | undefined): void {
  try {
    registry.registerCallable(category, name, description, fn);
  } catch {
    // Still registered by a server of this process that failed to start: it reads the same figures.
  }
}

/** Registers the computed object counters for a database label and schema. */
export function registerObjectCounters(registry: CounterRegistry, db: string, schema: ObjectSchema): void {
  const cache = (): ReturnType<typeof native.objCacheStats> => native.objCacheStats();
  callable(registry, OBJECT, 'cached_objects', 'Objects held by the object cache (SPEC: objects cached on the server)', () => cache().objects);
  callable(registry, OBJECT, 'cached_bytes', 'Bytes the object cache holds', () => cache().bytes);
  callable(registry, OBJECT, 'cache_capacity_bytes', 'Byte budget of the object cache (cache_size_in_bytes)', () => cache().capacity);
  callable(registry, OBJECT, 'cache_hits', 'Object lookups the cache answered', () => cache().hits);
  callable(registry, OBJECT, 'cache_misses', 'Object lookups the cache could not answer', () => cache().misses);
  callable(registry, OBJECT, 'cache_evictions', 'Objects dropped from the cache to stay within its budget', () => cache().evictions);
  const stored = (name: string): number => native.counterValue(DB_STAT, `${db}/${name}`) ?? 0;
  // A mean over no items has no value: read over REST it is a 204 (SPEC 4.4), and /metrics leaves it out.
  const mean = (total: string, count: string): number | undefined => {
    const n = stored(count);
    return n > 0 ? stored(total) / n : undefined;
  };
  callable(registry, DB_STAT, `${db}/commit_latency_mean_in_sec`, 'Mean time of a group commit (seconds)',
    () => mean(DbCounter.commitTimeTotal, DbCounter.groups));
  callable(registry, DB_STAT, `${db}/group_size_mean`, 'Mean number of events per database transaction', () => {
    const groups = stored(DbCounter.groups);
    return groups > 0 ? (stored(DbCounter.committed) + stored(DbCounter.conflicted) + stored(DbCounter.failed)) / groups : undefined;
  });
  callable(registry, DB_STAT, `${db}/fetch_latency_mean_in_sec`, 'Mean time of an object read from the database (seconds)',
    () => mean(DbCounter.fetchTimeTotal, DbCounter.fetchQueries));
  for (const type of schema.types) {
    callable(registry, MODEL, type.name, `Cached ${type.name} objects`, () => native.objCacheCountsByType()[type.index] ?? 0);
  }
}
