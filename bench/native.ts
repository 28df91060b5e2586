/**
 * bench/native: native plugin handlers against their managed twins, each in the same run:
 * - a trivial event handler, C vs TypeScript, events/s (same server, interleaved rounds);
 * - the ~50 µs CPU-bound handler (bench/cpu-work.ts's loop, same iterations), C vs TypeScript;
 * - the session echo through a native handler vs a managed one vs a raw uWebSockets.js echo
 *   (each server its own process, measured as bench/sessions measures, native and managed
 *   twice each, alternating);
 * - the cost of one call across the plugin boundary on its own: a C++ loop calling a trivial
 *   native handler through the host (call state, token, handler), and a JavaScript loop calling
 *   it through the addon, against an addon call that does nothing;
 * - the example game: arena clicks through the C++ game against the TypeScript game
 *   (bench/native-arena.ts), interleaved rounds.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { native, nativeTesting } from '../src/native.ts';
import { startServer, type GsfServer } from '../src/index.ts';
import { calibrate } from './cpu-work.ts';
import { printReport } from './report.ts';
import { load } from './session-load.ts';
import { baselineServer, gsfServer, type Server } from './session-servers.ts';
import { processCpuMs, stopProcess } from './processes.ts';
import { arenaClicks } from './native-arena.ts';

/** Event threads of the session servers: one per core the main thread leaves. */
const EVENT_THREADS = Number(process.env.GSF_BENCH_EVENT_THREADS ?? Math.max(1, os.availableParallelism() - 1));
const ROUNDS = 3;

const here = path.dirname(fileURLToPath(import.meta.url));
const THREADS = Math.max(2, os.availableParallelism());
const TAGS = 10_000;

async function untilCompleted(target: number): Promise<void> {
  while (native.queueStats().completed_total < target) await new Promise((r) => setTimeout(r, 1));
}

/** Invokes `count` events round-robin over TAGS tags; events/s until all complete. */
async function rate(server: GsfServer, event: string, payload: unknown, count: number): Promise<number> {
  const base = native.queueStats().completed_total;
  const start = performance.now();
  for (let i = 0; i < count; i += 5000) {
    const end = Math.min(count, i + 5000);
    for (let j = i; j < end; j++) server.invoke(event, payload, { tag: 10_000_000_000 + (j % TAGS) });
    await new Promise((r) => setImmediate(r));
  }
  await untilCompleted(base + count);
  return count / ((performance.now() - start) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Medians of interleaved rounds of two measurements, so a busy moment hits both alike. */
async function paired(rounds: number, a: () => Promise<number>, b: () => Promise<number>): Promise<[number, number]> {
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    as.push(await a());
    bs.push(await b());
  }
  return [median(as), median(bs)];
}

/** ns per iteration of `fn`, the median of a few timed loops. */
function nsPerCall(count: number, fn: () => void): number {
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) fn();
    runs.push(Number(process.hrtime.bigint() - start) / count);
  }
  return median(runs);
}

async function events(): Promise<{ trivial: [number, number]; cpu: [number, number]; boundary: Record<string, number> }> {
  const iterations = calibrate(50);
  const server = await startServer({
    manifest: {
      components: [
        { name: 'EventDispatcher', arguments: { event_threads_size: THREADS, slow_event_log_threshold_in_ms: 60000 } },
        { name: 'ApiService', arguments: { api_service_port: 0 } },
        { name: 'Logging', arguments: { minloglevel: 1 } },
      ],
      plugins: [path.join(here, 'plugins', 'bench'), path.join(here, 'plugins', 'native-bench')],
    },
    dir: here,
  });
  try {
    await rate(server, 'bench.noop', undefined, 50_000); // warm-up
    await rate(server, 'bench_native.noop', undefined, 50_000);
    const trivial = await paired(3, () => rate(server, 'bench_native.noop', undefined, 300_000),
      () => rate(server, 'bench.noop', undefined, 300_000));
    const cpu = await paired(5, () => rate(server, 'bench_native.cpu', iterations, 40_000),
      () => rate(server, 'bench.cpu', iterations, 40_000));
    // The boundary on its own, on this thread (the plugin is loaded in every thread's process).
    const info = native.pluginLoad(path.join(here, 'plugins', 'native-bench', 'build', 'native-bench.so'));
    const noop = info.events.find((e) => e.name === 'bench_native.noop')!.handler;
    nativeTesting().pluginBenchCalls(noop, 100_000, null);
    const hostToPlugin = median([0, 1, 2, 3, 4].map(() => nativeTesting().pluginBenchCalls(noop, 1_000_000, null)));
    const cells = new Float64Array(native.pluginContextView());
    cells.set([1, 2 ** 40, 0, 0, native.intern('bench_native.noop')]);
    const jsToPlugin = nsPerCall(1_000_000, () => { native.pluginCallEvent(noop, null); });
    const jsToEmpty = nsPerCall(1_000_000, () => { native.configVersion(); });
    return { trivial, cpu, boundary: { hostToPlugin, jsToPlugin, jsToEmpty } };
  } finally {
    await server.stop();
  }
}

export async function run(): Promise<void> {
  const e = await events();
  const a = await arenaClicks(EVENT_THREADS, ROUNDS);
  // The three servers run side by side and are measured in interleaved rounds (medians), so a
  // busy moment of the machine hits all of them alike.
  const servers: Server[] = [
    await gsfServer(EVENT_THREADS, {}, path.join(here, 'plugins', 'native-bench')),
    await gsfServer(EVENT_THREADS),
    await baselineServer('uws'),
  ];
  const peaks: number[][] = servers.map(() => []);
  // Server CPU time per message over each peak window: what a message costs the server, which
  // moves much less than throughput when other work shares the machine.
  const cpu: number[][] = servers.map(() => []);
  try {
    for (const s of servers) await load(s.port, { mode: 'peak', durationMs: 1000 });
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < servers.length; i++) {
        const pid = servers[i]!.child.pid!;
        let start = 0, end = 0;
        const l = await load(servers[i]!.port, {
          mode: 'peak', onWindow: (edge) => { if (edge === 'start') start = processCpuMs(pid); else end = processCpuMs(pid); },
        });
        peaks[i]!.push(l.perSec);
        cpu[i]!.push(((end - start) * 1000) / Math.max(1, l.perSec * l.seconds));
      }
    }
  } finally {
    for (const s of servers) await stopProcess(s.child);
  }
  const [nativeEcho, managedEcho, raw] = peaks.map((p) => ({ peak: { perSec: median(p) } })) as [
    { peak: { perSec: number } }, { peak: { perSec: number } }, { peak: { perSec: number } }];
  const [tn, tm] = e.trivial;
  const [cn, cm] = e.cpu;
  const b = e.boundary;
  const [sn, sm, sr] = [nativeEcho.peak.perSec, managedEcho.peak.perSec, raw.peak.perSec];
  const [un, um, ur] = cpu.map(median) as [number, number, number];
  printReport('native', [
    { label: `trivial event handler in C, ${TAGS} tags, ${THREADS} workers`, value: tn, unit: 'events/s' },
    { label: 'baseline: the same handler in TypeScript', value: tm, unit: 'events/s' },
    { label: 'ratio C / TypeScript', value: tn / tm, unit: 'x' },
    { label: '~50 µs CPU-bound handler in C (same loop, same iterations)', value: cn, unit: 'events/s' },
    { label: 'baseline: the same handler in TypeScript', value: cm, unit: 'events/s' },
    { label: 'ratio C / TypeScript', value: cn / cm, unit: 'x' },
    { label: `session echo, native handler (${EVENT_THREADS} event threads)`, value: sn, unit: 'msgs/s' },
    { label: 'baseline: session echo, managed handler', value: sm, unit: 'msgs/s' },
    { label: 'baseline: raw uWebSockets.js echo', value: sr, unit: 'msgs/s' },
    { label: 'ratio native / managed', value: sn / sm, unit: 'x' },
    { label: 'ratio native / raw uWS', value: sn / sr, unit: 'x' },
    { label: 'session echo, native handler: server CPU per message', value: un, unit: 'µs/msg' },
    { label: 'baseline: managed handler, server CPU per message', value: um, unit: 'µs/msg' },
    { label: 'baseline: raw uWebSockets.js echo, server CPU per message', value: ur, unit: 'µs/msg' },
    { label: 'ratio CPU per message managed / native (above 1: native costs less)', value: um / un, unit: 'x' },
    { label: `arena clicks, C++ game (${a.connections} players, ${EVENT_THREADS} event threads)`, value: a.native, unit: 'clicks/s' },
    { label: 'baseline: arena clicks, TypeScript game', value: a.managed, unit: 'clicks/s' },
    { label: 'ratio C++ game / TypeScript game', value: a.native / a.managed, unit: 'x' },
    { label: 'arena clicks, server CPU per click: C++ game', value: a.cpuNative, unit: 'µs/click' },
    { label: 'baseline: TypeScript game, server CPU per click', value: a.cpuManaged, unit: 'µs/click' },
    { label: 'one call host → plugin (C++ loop, trivial handler), ns', value: b.hostToPlugin!, unit: 'ns' },
    { label: 'one call JavaScript → addon → plugin, ns', value: b.jsToPlugin!, unit: 'ns' },
    { label: 'baseline: an addon call without arguments, ns', value: b.jsToEmpty!, unit: 'ns' },
  ], {
    threads: THREADS,
    event_threads_sessions: EVENT_THREADS,
    trivial: { native_events_per_sec: Math.round(tn), managed_events_per_sec: Math.round(tm), ratio: +(tn / tm).toFixed(2) },
    cpu_bound: { native_events_per_sec: Math.round(cn), managed_events_per_sec: Math.round(cm), ratio: +(cn / cm).toFixed(2) },
    session_echo: {
      native_msgs_per_sec: Math.round(sn), managed_msgs_per_sec: Math.round(sm), uws_msgs_per_sec: Math.round(sr),
      ratio_vs_managed: +(sn / sm).toFixed(2), ratio_vs_uws: +(sn / sr).toFixed(3), rounds: ROUNDS,
      cpu_us_per_msg: { native: +un.toFixed(2), managed: +um.toFixed(2), uws: +ur.toFixed(2) },
    },
    arena_clicks: {
      native_clicks_per_sec: Math.round(a.native), managed_clicks_per_sec: Math.round(a.managed), ratio: +(a.native / a.managed).toFixed(2),
      cpu_us_per_click: { native: +a.cpuNative.toFixed(2), managed: +a.cpuManaged.toFixed(2) }, rounds: a.rounds, players: a.connections,
    },
    boundary_ns: {
      host_to_plugin: +b.hostToPlugin!.toFixed(1), js_to_plugin: +b.jsToPlugin!.toFixed(1),
      js_empty_call_baseline: +b.jsToEmpty!.toFixed(1),
    },
  });
}
