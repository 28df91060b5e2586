/**
 * Prometheus text exposition (format 0.0.4) at GET /metrics (component `CounterService`),
 * named by Prometheus' conventions and checked with `promtool check metrics` in the tests:
 * growing values are `_total` counters, every family has HELP text, and the per-event times
 * are histograms. docs/reference/metrics.md lists every name written here.
 */
import { native, ProfileOrder } from '../../native.ts';
import type { CounterRegistry } from '../../counters/registry.ts';
import type { Router } from './router.ts';
import { Exposition, type Labels, type MetricType } from './exposition.ts';
import { clusterMetrics, clusterServerLabel, type ClusterMetrics } from '../../hooks/cluster-hooks.ts';

export { escapeLabel } from './exposition.ts';

/** Where a built-in counter goes: a family, its labels, and a factor to base units. */
interface Mapping {
  metric: string;
  type: Exclude<MetricType, 'histogram'>;
  help: string;
  labels?: Labels;
  scale?: number;
}

const g = (metric: string, help: string, labels?: Labels, scale?: number): Mapping => ({ metric, type: 'gauge', help, labels, scale });
const c = (metric: string, help: string, labels?: Labels): Mapping => ({ metric, type: 'counter', help, labels });

const CPU = 'CPU time the process has used, by mode (getrusage)';
const FAULTS = 'Page faults of the process, by kind';
const SWITCHES = 'Context switches of the process, by kind';
const BLOCKS = 'Block I/O operations of the process, by direction';
const IPC = 'IPC messages of the process, by direction';
const MEMORY = 'Memory of the machine in bytes, by kind';
const SWAP = 'Swap space of the machine in bytes, by kind';
const LOAD = 'Load average of the machine over the last 1, 5 and 15 minutes';

/** `process` counters; `idrss`, `isrss` and `ixrss` (always 0 on Linux), `updated` and `refresh_interval` are left out. */
const PROCESS: Record<string, Mapping> = {
  utime: c('gsf_process_cpu_seconds_total', CPU, { mode: 'user' }),
  stime: c('gsf_process_cpu_seconds_total', CPU, { mode: 'system' }),
  cpu: g('gsf_process_cpu_usage_ratio', 'CPU use of the process over the last refresh interval, as a share of one core', undefined, 0.01),
  vsz: g('gsf_process_virtual_memory_bytes', 'Virtual memory size of the process'),
  maxrss: g('gsf_process_max_resident_memory_bytes', 'Largest resident set size the process has had', undefined, 1024),
  minflt: c('gsf_process_page_faults_total', FAULTS, { kind: 'minor' }),
  majflt: c('gsf_process_page_faults_total', FAULTS, { kind: 'major' }),
  nvcsw: c('gsf_process_context_switches_total', SWITCHES, { kind: 'voluntary' }),
  nivcsw: c('gsf_process_context_switches_total', SWITCHES, { kind: 'involuntary' }),
  inblock: c('gsf_process_block_operations_total', BLOCKS, { direction: 'in' }),
  oublock: c('gsf_process_block_operations_total', BLOCKS, { direction: 'out' }),
  nsignals: c('gsf_process_signals_total', 'Signals the process has received'),
  nswap: c('gsf_process_swaps_total', 'Times the process was swapped out'),
  msgsnd: c('gsf_process_ipc_messages_total', IPC, { direction: 'sent' }),
  msgrcv: c('gsf_process_ipc_messages_total', IPC, { direction: 'received' }),
};

/** `os` counters; `uptime` becomes the boot time, `type` an info metric, `updated` and `refresh_interval` are left out. */
const OS: Record<string, Mapping> = {
  cpus: g('gsf_os_cpus', 'CPU cores of the machine'),
  procs: g('gsf_os_usable_cpus', 'CPU cores this process may use'),
  totalram: g('gsf_os_memory_bytes', MEMORY, { kind: 'total' }),
  freeram: g('gsf_os_memory_bytes', MEMORY, { kind: 'free' }),
  sharedram: g('gsf_os_memory_bytes', MEMORY, { kind: 'shared' }),
  bufferram: g('gsf_os_memory_bytes', MEMORY, { kind: 'buffers' }),
  totalswap: g('gsf_os_swap_bytes', SWAP, { kind: 'total' }),
  freeswap: g('gsf_os_swap_bytes', SWAP, { kind: 'free' }),
  load1: g('gsf_os_load_average', LOAD, { minutes: '1' }),
  load5: g('gsf_os_load_average', LOAD, { minutes: '5' }),
  load15: g('gsf_os_load_average', LOAD, { minutes: '15' }),
};

/** `engine` counters of the session service; another engine counter is `gsf_engine_value{name}`. */
const ENGINE: Record<string, Mapping> = {
  sessions: g('gsf_sessions', 'Connected client sessions'),
  concurrent_user: g('gsf_concurrent_users', 'Accounts logged in'),
  maintenance_dropped_messages: c('gsf_maintenance_dropped_messages_total', 'Client messages dropped because maintenance was on'),
};

/** With the Cluster component every sample carries `server="<id>"`, so one Prometheus can scrape every server. */
class ServerExposition extends Exposition {
  constructor(private readonly server: string) {
    super();
  }

  override sample(name: string, labels: Labels, value: number): void {
    super.sample(name, { ...labels, server: this.server }, value);
  }

  override histogram(name: string, labels: Labels, bounds: readonly number[], buckets: readonly number[], sum: number): void {
    super.histogram(name, { ...labels, server: this.server }, bounds, buckets, sum);
  }
}

const TIMES = [
  ['execution', 'gsf_event_execution_seconds', 'Time to process an event (queue + handler + io-wait), by event name'],
  ['handler', 'gsf_event_handler_seconds', 'Time spent in the event handler, by event name'],
  ['io_wait', 'gsf_event_io_wait_seconds', 'Time an event waited on engine I/O, by event name'],
  ['queue', 'gsf_event_queue_seconds', 'Time an event waited in the queue, by event name'],
] as const;

const OBJECT_RATIOS = [
  ['object_cache_hit_rate_mean', 'gsf_event_object_cache_hit_ratio', 'Mean share of fetched objects served from the cache, by event name'],
  ['object_nolock_rate_mean', 'gsf_event_object_nolock_ratio', 'Mean share of objects fetched without a lock, by event name'],
  ['object_lease_rate_mean', 'gsf_event_object_lease_ratio', 'Mean share of objects borrowed from another server, by event name'],
  ['object_null_rate_mean', 'gsf_event_object_null_ratio', 'Mean null rate of object fetches, by event name'],
] as const;

function writeMapped(out: Exposition, registry: CounterRegistry, category: string, table: Record<string, Mapping>): void {
  for (const [name, m] of Object.entries(table)) {
    const v = registry.read(category, name);
    if (typeof v !== 'number') continue;
    out.family(m.metric, m.type, m.help);
    out.sample(m.metric, m.labels ?? {}, v * (m.scale ?? 1));
  }
}

function writeSystem(out: Exposition, registry: CounterRegistry): void {
  writeMapped(out, registry, 'process', PROCESS);
  writeMapped(out, registry, 'os', OS);
  const uptime = registry.read('os', 'uptime');
  const updated = registry.read('os', 'updated');
  if (typeof uptime === 'number' && typeof updated === 'number') {
    out.family('gsf_os_boot_time_seconds', 'gauge', 'When the machine booted (Unix time)');
    out.sample('gsf_os_boot_time_seconds', {}, updated - uptime);
  }
  const type = registry.read('os', 'type');
  if (typeof type === 'string') {
    out.family('gsf_os_info', 'gauge', 'Operating system type (always 1)');
    out.sample('gsf_os_info', { type }, 1);
  }
}

function writeQueue(out: Exposition, registry: CounterRegistry, profilerOn: boolean): void {
  const q = native.queueStats();
  const gauges: Array<[string, string, number | null]> = [
    ['gsf_events_waiting', 'Events waiting in the queue', q.waiting],
    ['gsf_events_outstanding', 'Events claimed by event threads and not completed', q.outstanding],
    ['gsf_events_running', 'Events running now (with enable_outstanding_event_profiler)', numberOrNull(registry.read('event/profiling/outstanding', 'running'))],
    ['gsf_event_profiler_enabled', '1 while the event profiler is on (enable_event_profiler)', profilerOn ? 1 : 0],
    ['gsf_event_profiler_resetting', '1 while the event profiler is being reset', native.profilerResetting() ? 1 : 0],
  ];
  for (const [name, help, v] of gauges) {
    if (v === null) continue;
    out.family(name, 'gauge', help);
    out.sample(name, {}, v);
  }
  const counters: Array<[string, string, number]> = [
    ['gsf_events_queued_total', 'Events put in the queue', q.pushed_total],
    ['gsf_events_completed_total', 'Events that completed', q.completed_total],
    ['gsf_events_cancelled_total', 'Events that ended without completing: each that timed out, and the queued events of its tag dropped with it', q.cancelled_total],
  ];
  for (const [name, help, v] of counters) {
    out.family(name, 'counter', help);
    out.sample(name, {}, v);
  }
}

function numberOrNull(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

function writeProfiler(out: Exposition): void {
  const { bounds, events } = native.profilerHistograms();
  for (const [, metric, help] of TIMES) out.family(metric, 'histogram', help);
  for (const [event, h] of events) {
    for (const [key, metric] of TIMES) out.histogram(metric, { event }, bounds, h[key].buckets, h[key].sum);
  }
  out.family('gsf_event_timeouts_total', 'counter', 'Events timed out, by event name');
  out.family('gsf_event_rollbacks_total', 'counter', 'Rollbacks of event changes, by event name');
  out.family('gsf_event_objects_created_total', 'counter', 'Objects created by events, by event name');
  out.family('gsf_event_objects_fetched_total', 'counter', 'Objects fetched by events (nonexistent ones excluded), by event name');
  for (const [, metric, help] of OBJECT_RATIOS) out.family(metric, 'gauge', help);
  for (const [event, p] of native.profilerAll(ProfileOrder.none)) {
    const w = p.all_time;
    const labels = { event };
    out.sample('gsf_event_timeouts_total', labels, w.timeout_count ?? 0);
    out.sample('gsf_event_rollbacks_total', labels, Math.round(w.rollback_count_mean * w.execution_count));
    out.sample('gsf_event_objects_created_total', labels, Math.round(w.object_create_count_mean * w.execution_count));
    out.sample('gsf_event_objects_fetched_total', labels, Math.round(w.object_count_mean * w.execution_count));
    for (const [field, metric] of OBJECT_RATIOS) out.sample(metric, labels, w[field]);
  }
}

/**
 * `engine`'s other counters, and every counter of any other category that no family of its own
 * writes: a plugin's, also in a built-in category (`os`, `event`, a cluster one), where the
 * built-in counters (the provided ones, the cluster's) have their families.
 */
function writeOthers(out: Exposition, registry: CounterRegistry, cluster: ClusterMetrics | null): void {
  writeMapped(out, registry, 'engine', ENGINE);
  // gsf's engine counters and plugins' share the store: every one without a family of its own.
  for (const [name, v] of registry.values('engine') ?? []) {
    if (ENGINE[name] !== undefined || typeof v !== 'number') continue;
    out.family('gsf_engine_value', 'gauge', 'Other engine counters (category engine), by name');
    out.sample('gsf_engine_value', { name }, v);
  }
  for (const category of registry.categories()) {
    if (category === 'engine') continue;
    // A plugin callback that throws leaves out its own sample only (and writes a log line).
    for (const [name, v] of registry.valuesBesideProvided(category)) {
      if (cluster?.owns(category, name) === true) continue;
      if (typeof v === 'number') {
        out.family('gsf_plugin_value', 'gauge', 'Counters that plugins define, by category and name');
        out.sample('gsf_plugin_value', { category, name }, v);
      } else if (typeof v === 'string') {
        out.family('gsf_plugin_info', 'gauge', 'Text-valued plugin counters, by category, name and value (always 1)');
        out.sample('gsf_plugin_info', { category, name, value: v }, 1);
      }
    }
  }
}

/** Renders every family; the per-event ones only while the event profiler is on. */
export function renderMetrics(registry: CounterRegistry, profilerOn: boolean): string {
  const server = clusterServerLabel();
  const out = server === null ? new Exposition() : new ServerExposition(server);
  writeSystem(out, registry);
  writeQueue(out, registry, profilerOn);
  if (profilerOn) writeProfiler(out);
  const cluster = clusterMetrics();
  cluster?.write(out, registry);
  writeOthers(out, registry, cluster);
  return out.text();
}

export function registerMetricsRoute(router: Router, registry: CounterRegistry, profilerOn: () => boolean): void {
  router.get('/metrics', () => ({
    status: 200,
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    body: renderMetrics(registry, profilerOn()),
  }));
}
