/**
 * Cluster counters (`GET /v1/cluster/counters/{category}/{counter}`): each server reads the
 * counter the way `/v1/counters/` does, and the answers are combined by a rule.
 *
 * The default rule follows what a counter measures: counts and totals add up over the servers
 * (`sum`: sessions, messages, events, cached objects, the processes' CPU time and memory, any
 * name with `total`); levels, extremes and figures of the machine do not, so the largest is
 * taken (`max`: means, maxima, rates and ratios, times and intervals, the `os` category, and
 * the `coordination_stat` counters that already describe the whole cluster).
 * `?aggregate=sum|max|min|mean` picks another rule.
 */
import type { CounterReading, CounterRegistry } from '../counters/registry.ts';

export type Aggregate = 'sum' | 'max' | 'min' | 'mean';
export const AGGREGATES: readonly Aggregate[] = ['sum', 'max', 'min', 'mean'];

const LEVEL = /(^|[_/])(max|mean|stdev|rate|ratio|latency|time|interval|updated|uptime|load\d*|capacity|connected|enabled|resetting)([_/]|$)|_in_sec$/;

const TOTAL = /(^|[_/])total([_/]|$)/;

/** The rule a counter gets when the request names none. */
export function defaultAggregate(category: string, counter: string): Aggregate {
  if (TOTAL.test(counter)) return 'sum';
  if (category === 'os' || category.startsWith('event/profiling')) return 'max';
  if (category === 'coordination_stat' && counter.startsWith('cluster_')) return 'max';
  return LEVEL.test(counter) ? 'max' : 'sum';
}

/** One server's reading of a counter path: the split it found and the value (null: no value, 204). */
export interface CounterAnswer {
  category: string;
  counter: string;
  value: number | string | null;
}

/** Reads a counter path as `/v1/counters/` does (longest category first); null when there is none. */
export function readCounterPath(registry: CounterRegistry, path: string): CounterAnswer | null {
  // Empty segments come only from '%2F' (the router drops those of the URL), as there: the
  // counter 'trail/' is read from 'pp/trail%2F'.
  const segments = path.split('/');
  for (let i = segments.length - 1; i >= 1; i--) {
    const category = segments.slice(0, i).join('/');
    const counter = segments.slice(i).join('/');
    const value: CounterReading | null = registry.read(category, counter);
    if (value === null) continue;
    return { category, counter, value: value === undefined ? null : value };
  }
  return null;
}

/** Combines the numeric values; null when no server had a number. */
export function combine(values: readonly number[], rule: Aggregate): number | null {
  if (values.length === 0) return null;
  switch (rule) {
    case 'sum': return values.reduce((a, b) => a + b, 0);
    case 'max': return Math.max(...values);
    case 'min': return Math.min(...values);
    case 'mean': return values.reduce((a, b) => a + b, 0) / values.length;
  }
}
