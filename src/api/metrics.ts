/**
 * Prometheus text exposition (format 0.0.4) at GET /metrics. Stable names:
 *   gsf_counter{category,name}                    every numeric counter
 *   gsf_counter_info{category,name,value} 1       string-valued counters (os/type)
 *   gsf_event_summary_<field>{window}             profiler summary (seconds for *_seconds)
 *   gsf_event_<field>{event,window}               per-event profiler figures
 * `_in_sec` in a profiler field becomes `_seconds`; window is `all_time` or `last1min`.
 */
import { native, ProfileOrder } from '../native.ts';
import type { CounterRegistry } from '../counters/registry.ts';
import type { Router } from './router.ts';

/** Escapes a label value (backslash, double quote, line feed). */
export function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function metricName(field: string): string {
  return field.replace(/_in_sec$/, '_seconds');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** Renders every counter and the profiler's figures. */
export function renderMetrics(registry: CounterRegistry, withProfiler: boolean): string {
  const lines: string[] = [];
  const numeric: string[] = [];
  const info: string[] = [];
  for (const category of registry.categories()) {
    if (category.startsWith('event/profiling/summary') || category === 'event/profiling/all') continue;
    for (const name of registry.list(category) ?? []) {
      const v = registry.read(category, name);
      const labels = `category="${escapeLabel(category)}",name="${escapeLabel(name)}"`;
      if (typeof v === 'number') numeric.push(`gsf_counter{${labels}} ${formatValue(v)}`);
      else if (typeof v === 'string') info.push(`gsf_counter_info{${labels},value="${escapeLabel(v)}"} 1`);
    }
  }
  lines.push('# HELP gsf_counter gsf counters by category and name', '# TYPE gsf_counter gauge', ...numeric);
  if (info.length > 0) lines.push('# HELP gsf_counter_info string-valued gsf counters', '# TYPE gsf_counter_info gauge', ...info);
  if (withProfiler) {
    const families = new Map<string, string[]>();
    const add = (name: string, labels: string, v: number): void => {
      const list = families.get(name) ?? [];
      list.push(`${name}{${labels}} ${formatValue(v)}`);
      families.set(name, list);
    };
    const summary = native.profilerSummary();
    for (const window of ['all_time', 'last1min'] as const) {
      for (const [field, v] of Object.entries(summary[window])) add(`gsf_event_summary_${metricName(field)}`, `window="${window}"`, v);
    }
    for (const [event, p] of native.profilerAll(ProfileOrder.none)) {
      for (const window of ['all_time', 'last1min'] as const) {
        for (const [field, v] of Object.entries(p[window])) {
          if (typeof v === 'number') add(`gsf_event_${metricName(field)}`, `event="${escapeLabel(event)}",window="${window}"`, v);
        }
      }
    }
    for (const [name, samples] of families) lines.push(`# TYPE ${name} gauge`, ...samples);
  }
  return lines.join('\n') + '\n';
}

export function registerMetricsRoute(router: Router, registry: CounterRegistry, profilerOn: () => boolean): void {
  router.get('/metrics', () => ({
    status: 200,
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    body: renderMetrics(registry, profilerOn()),
  }));
}
