/**
 * Built-in counter categories (SPEC 2.5): `process`, `os`, `event`, `event/performance/queue`,
 * `event/profiling/{summary,all,reset,outstanding}`. Process and OS figures are sampled every
 * `refresh_interval_in_sec`; queue and profiler figures are read live from the native core.
 * `engine` (sessions) and the object/RPC categories belong to the features that fill them.
 *
 * `event/profiling/outstanding` always has `count` (events claimed and not completed, SPEC
 * 2.5). With `enable_outstanding_event_profiler` (SPEC 6.4: profile currently running events)
 * it also has `running` and, per event running or awaiting (longest first), `running/<n>/event_name`,
 * `event_id`, `event_tag`, `event_thread_index`, `elapsed_time_in_sec` and `awaiting` (1 or 0);
 * without it those do not exist (404).
 */
import fs from 'node:fs';
import os from 'node:os';
import { native, ProfileOrder } from '../native.ts';
import type { CategoryProvider, CounterReading, CounterRegistry } from './registry.ts';

/** Outstanding events as the watchdog reports them (`Watchdog.outstanding`). */
export interface OutstandingReport {
  count: number;
  running: Array<{ event_name: string; event_id: number; event_tag: number; event_thread_index: number; elapsed_time_in_sec: number; awaiting: boolean }>;
}

export interface BuiltinOptions {
  /** `enable_outstanding_event_profiler`: list the running events. */
  listRunning: boolean;
  /** Reads the outstanding events (the watchdog's view). */
  outstanding: (listRunning: boolean) => OutstandingReport;
}

type Table = Map<string, CounterReading>;

function tableProvider(values: () => Table, descriptions: Record<string, string> | ((name: string) => string)): CategoryProvider {
  return {
    list: () => [...values().keys()].sort(),
    read: (name) => {
      const t = values();
      return t.has(name) ? t.get(name) : null;
    },
    values,
    describe: (name) => (typeof descriptions === 'function' ? descriptions(name) : descriptions[name] ?? ''),
  };
}

const PROCESS_DESC: Record<string, string> = {
  vsz: 'Virtual memory size (bytes)', cpu: 'CPU use over the last refresh interval (percent of one core)',
  nivcsw: 'Involuntary context switches', nswap: 'Swaps', oublock: 'Block output operations',
  minflt: 'Minor page faults', idrss: 'Unshared data size (kB)', isrss: 'Unshared stack size (kB)',
  ixrss: 'Shared memory size (kB)', nsignals: 'Signals received', majflt: 'Major page faults',
  maxrss: 'Maximum resident set size (kB)', msgsnd: 'IPC messages sent', msgrcv: 'IPC messages received',
  nvcsw: 'Voluntary context switches', stime: 'System CPU time (seconds)', updated: 'Time of the last refresh (Unix seconds)',
  utime: 'User CPU time (seconds)', inblock: 'Block input operations', refresh_interval: 'Counter refresh interval (seconds)',
};

const OS_DESC: Record<string, string> = {
  procs: 'Processor count', totalswap: 'Total swap (bytes)', freeswap: 'Free swap (bytes)', bufferram: 'Buffer memory (bytes)',
  load15: 'Load average over 15 minutes', load5: 'Load average over 5 minutes', load1: 'Load average over 1 minute',
  uptime: 'System uptime (seconds)', cpus: 'Core count', totalram: 'Total memory (bytes)', freeram: 'Free memory (bytes)',
  sharedram: 'Shared memory (bytes)', type: 'OS type', updated: 'Time of the last refresh (Unix seconds)',
  refresh_interval: 'Counter refresh interval (seconds)',
};

const OUTSTANDING_DESC: Record<string, string> = {
  count: 'Events claimed by event threads and not completed',
  running: 'Events running now (enable_outstanding_event_profiler)',
};

function vszBytes(): number {
  try {
    const m = /VmSize:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function meminfo(): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const line of fs.readFileSync('/proc/meminfo', 'utf8').split('\n')) {
      const m = /^(\w+):\s+(\d+)/.exec(line);
      if (m) out[m[1]!] = Number(m[2]) * 1024;
    }
  } catch {
    // Not Linux: the fields below fall back to what `os` offers.
  }
  return out;
}

/** Samples process and OS figures every `intervalSec`; returns a stop function. */
export function registerBuiltinCounters(registry: CounterRegistry, intervalSec: number, options: BuiltinOptions): () => void {
  const proc: Table = new Map();
  const system: Table = new Map();
  let last = { at: performance.now(), cpu: process.cpuUsage() };
  const refresh = (): void => {
    const r = process.resourceUsage();
    const now = performance.now();
    const cpu = process.cpuUsage();
    const wallUs = (now - last.at) * 1000;
    const usedUs = cpu.user - last.cpu.user + (cpu.system - last.cpu.system);
    last = { at: now, cpu };
    const updated = Math.floor(Date.now() / 1000);
    const entries: Array<[string, number]> = [
      ['vsz', vszBytes()], ['cpu', wallUs > 0 ? +((usedUs / wallUs) * 100).toFixed(2) : 0], ['nivcsw', r.involuntaryContextSwitches],
      ['nswap', r.swappedOut], ['oublock', r.fsWrite], ['minflt', r.minorPageFault], ['idrss', r.unsharedDataSize],
      ['isrss', r.unsharedStackSize], ['ixrss', r.sharedMemorySize], ['nsignals', r.signalsCount], ['majflt', r.majorPageFault],
      ['maxrss', r.maxRSS], ['msgsnd', r.ipcSent], ['msgrcv', r.ipcReceived], ['nvcsw', r.voluntaryContextSwitches],
      ['stime', r.systemCPUTime / 1e6], ['updated', updated], ['utime', r.userCPUTime / 1e6], ['inblock', r.fsRead],
      ['refresh_interval', intervalSec],
    ];
    for (const [k, v] of entries) proc.set(k, v);
    const mem = meminfo();
    const [l1, l5, l15] = os.loadavg();
    const sys: Array<[string, CounterReading]> = [
      ['procs', os.availableParallelism()], ['totalswap', mem.SwapTotal ?? 0], ['freeswap', mem.SwapFree ?? 0],
      ['bufferram', mem.Buffers ?? 0], ['load15', l15!], ['load5', l5!], ['load1', l1!], ['uptime', Math.floor(os.uptime())],
      ['cpus', os.cpus().length], ['totalram', os.totalmem()], ['freeram', mem.MemFree ?? os.freemem()],
      ['sharedram', mem.Shmem ?? 0], ['type', os.type()], ['updated', updated], ['refresh_interval', intervalSec],
    ];
    for (const [k, v] of sys) system.set(k, v);
  };
  refresh();
  const timer = setInterval(refresh, intervalSec * 1000);
  timer.unref();

  registry.provide('process', tableProvider(() => proc, PROCESS_DESC));
  registry.provide('os', tableProvider(() => system, OS_DESC));

  const queue = (): Table => {
    const q = native.queueStats();
    return new Map([['inflow_per_sec', q.inflow_per_sec], ['throughput_per_sec', q.throughput_per_sec], ['waiting', q.waiting]]);
  };
  registry.provide('event/performance/queue', tableProvider(queue, {
    inflow_per_sec: 'Events queued during the last second', throughput_per_sec: 'Events completed during the last second',
    waiting: 'Events waiting in the queue',
  }));
  registry.provide('event', tableProvider(() => new Map([['event_queue_length', native.queueStats().waiting]]), {
    event_queue_length: 'Events in the queue (monitored)',
  }));

  const flatten = (prefix: string, obj: Record<string, number | undefined>, into: Table): void => {
    for (const [k, v] of Object.entries(obj)) if (v !== undefined) into.set(`${prefix}${k}`, v);
  };
  registry.provide('event/profiling/summary', tableProvider(() => {
    const s = native.profilerSummary();
    const t: Table = new Map();
    flatten('all_time/', { ...s.all_time }, t);
    flatten('last1min/', { ...s.last1min }, t);
    return t;
  }, (name) => `Event profiling summary, ${name.replace('/', ': ')}`));
  registry.provide('event/profiling/all', tableProvider(() => {
    const t: Table = new Map();
    for (const [name, p] of native.profilerAll(ProfileOrder.none)) {
      flatten(`${name}/all_time/`, { ...p.all_time }, t);
      flatten(`${name}/last1min/`, { ...p.last1min }, t);
    }
    return t;
  }, (name) => `Event profiling of ${name.split('/').slice(0, -2).join('/')}: ${name.split('/').slice(-2).join(' ')}`));
  registry.provide('event/profiling/reset', tableProvider(() => new Map([['resetting', native.profilerResetting() ? 1 : 0]]), {
    resetting: '1 while event profiling is being reset',
  }));
  registry.provide('event/profiling/outstanding', tableProvider(() => {
    const o = options.outstanding(options.listRunning);
    const t: Table = new Map([['count', o.count]]);
    if (!options.listRunning) return t;
    t.set('running', o.running.length);
    // One entry per event, longest first: several events of one thread may await at once (and
    // one more run on it meanwhile).
    o.running.forEach((r, i) => {
      const at = `running/${i}/`;
      t.set(`${at}event_name`, r.event_name);
      t.set(`${at}event_id`, r.event_id);
      t.set(`${at}event_tag`, r.event_tag);
      t.set(`${at}event_thread_index`, r.event_thread_index);
      t.set(`${at}elapsed_time_in_sec`, r.elapsed_time_in_sec);
      t.set(`${at}awaiting`, r.awaiting ? 1 : 0);
    });
    return t;
  }, (name) => OUTSTANDING_DESC[name] ?? `Outstanding event ${name.split('/')[1]} (longest first): ${name.split('/')[2]}`));

  return () => clearInterval(timer);
}
