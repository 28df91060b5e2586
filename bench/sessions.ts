/**
 * bench/sessions: client messages per second and round-trip latency through
 * session → network event → worker handler → reply, against baselines in the same run:
 * - a raw uWebSockets.js echo server (no decoding, no events, no threads);
 * - a `ws` server running the same handler inline (decode, handler, encode on one thread).
 * Each server is its own process (gsf as `gsf start`, the baselines from
 * bench/session-baselines.ts); the load generator (bench/ws-load-worker.ts) pipelines
 * pre-encoded frames over raw sockets from worker threads of this process. Also: resident
 * memory per idle session of a `gsf start` process.
 */
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ChildProcess } from 'node:child_process';
import { workerExecArgv } from '../src/events/dispatcher.ts';
import { printReport } from './report.ts';
import { processCpuMs, rssKb, startProcess, stopProcess } from './processes.ts';
import type { LoadResult, LoadTask } from './ws-load-worker.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const LOAD_THREADS = Number(process.env.GSF_BENCH_LOAD_THREADS ?? 2);
const CONNECTIONS = Number(process.env.GSF_BENCH_CONNECTIONS ?? 64);
const WINDOW = Number(process.env.GSF_BENCH_WINDOW ?? 32);
const DURATION_MS = Number(process.env.GSF_BENCH_DURATION_MS ?? 4000);
const WARMUP_MS = 1000;
const IDLE_SESSIONS = Number(process.env.GSF_BENCH_IDLE_SESSIONS ?? 19_000);
/** A load-generator thread (a TypeScript module, loaded through tsx's CommonJS hook as event workers are). */
function loadWorker(task: LoadTask): Worker {
  const file = path.join(here, 'ws-load-worker.ts');
  const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(file)});`;
  return new Worker(code, { eval: true, workerData: task, execArgv: workerExecArgv() });
}

const MESSAGE = JSON.stringify({ type: 'echo', body: { n: 1, text: 'hello' } });
const PATH = '/?version=1.0.0&codec=json';

interface Load {
  perSec: number;
  p50Ms: number;
  p99Ms: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! / 1000;
}

/** Runs the generator on `LOAD_THREADS` threads against `port`. */
async function load(port: number, mode: 'peak' | 'rate', ratePerSec = 0): Promise<Load> {
  const results = await Promise.all(Array.from({ length: LOAD_THREADS }, () => new Promise<LoadResult>((resolve, reject) => {
    const task: LoadTask = {
      host: '127.0.0.1', port, path: PATH, connections: Math.ceil(CONNECTIONS / LOAD_THREADS), mode, message: MESSAGE,
      window: WINDOW, warmupMs: WARMUP_MS, durationMs: DURATION_MS, ratePerSec: ratePerSec / LOAD_THREADS,
    };
    const w = loadWorker(task);
    w.on('message', (m: { done?: LoadResult; error?: string }) => {
      if (m.done) resolve(m.done);
      if (m.error) reject(new Error(m.error));
      if (m.done || m.error) void w.terminate();
    });
    w.on('error', reject);
  })));
  const replies = results.reduce((a, r) => a + r.replies, 0);
  const seconds = Math.max(...results.map((r) => r.seconds));
  const rtts = results.flatMap((r) => r.rtts).sort((a, b) => a - b);
  return { perSec: replies / seconds, p50Ms: percentile(rtts, 0.5), p99Ms: percentile(rtts, 0.99) };
}

const HALF_ROUNDS = 3;
/** A rate every server sustains, for comparing their CPU cost per message. */
const FIXED_RATE = Number(process.env.GSF_BENCH_FIXED_RATE ?? 50_000);
/**
 * Event threads of the measured gsf: one per core the main thread leaves (the sizing the README
 * recommends); `GSF_BENCH_EVENT_THREADS` overrides it.
 */
export const EVENT_THREADS = Number(process.env.GSF_BENCH_EVENT_THREADS ?? Math.max(1, os.availableParallelism() - 1));

export interface Measured {
  peak: Load;
  half: Load;
  /** At `FIXED_RATE`: the round trips, and the server's CPU per message (µs) over the threads it had before the load. */
  fixed: Load;
  cpuUsPerMsg: number;
}

interface Server {
  child: ChildProcess;
  port: number;
}

/**
 * A warm-up run, the peak, then `HALF_ROUNDS` rounds at half of it (the round with the median
 * p99 is reported), then the server process's CPU per message at `FIXED_RATE`; then stops it.
 */
export async function measure(server: Server): Promise<Measured> {
  try {
    const { port } = server;
    await load(port, 'peak'); // warm-up: JIT, worker batch sizing
    const peak = await load(port, 'peak');
    const rounds: Load[] = [];
    for (let i = 0; i < HALF_ROUNDS; i++) rounds.push(await load(port, 'rate', peak.perSec / 2));
    rounds.sort((a, b) => a.p99Ms - b.p99Ms);
    const cpuBefore = processCpuMs(server.child.pid!);
    const fixed = await load(port, 'rate', FIXED_RATE);
    const cpuMs = processCpuMs(server.child.pid!) - cpuBefore;
    // The open-loop generator sends at the rate from its start, warm-up included.
    const messages = (FIXED_RATE * (WARMUP_MS + DURATION_MS)) / 1000;
    return { peak, half: rounds[Math.floor(HALF_ROUNDS / 2)]!, fixed, cpuUsPerMsg: (cpuMs * 1000) / messages };
  } finally {
    await stopProcess(server.child);
  }
}

/** A `gsf start` process with a benchmark plugin (its `echo`); `sessionArgs` are added to SessionService's. */
export function gsfServer(eventThreads: number, sessionArgs: Record<string, unknown> = {},
  plugin = path.join(here, 'plugins', 'sessions')): Promise<Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-sessions-'));
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'EventDispatcher', arguments: { event_threads_size: eventThreads, slow_event_log_threshold_in_ms: 60000 } },
      { name: 'ApiService', arguments: { api_service_port: 0 } },
      { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0, ...sessionArgs } },
    ],
    plugins: [plugin],
  }));
  return startProcess([path.join(here, '..', 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], /websocket=[^:\s]+:(\d+)/);
}

/** A baseline server of bench/session-baselines.ts in its own process. */
export function baselineServer(kind: 'uws' | 'ws'): Promise<Server> {
  return startProcess([...workerExecArgv(), path.join(here, 'session-baselines.ts'), kind], /port=(\d+)/);
}

/** RSS per idle session of a `gsf start` child process holding `IDLE_SESSIONS` connections. */
export async function idleSessions(): Promise<{ sessions: number; bytesPerSession: number; rssBeforeMb: number; rssAfterMb: number }> {
  const { child, port } = await gsfServer(2, { idle_timeout_in_sec: 0 });
  try {
    // Two steps: the slope between them leaves out start-up garbage the collector frees later.
    const half = Math.floor(IDLE_SESSIONS / 2);
    // V8's memory reducer shrinks the start-up heap some seconds after start: wait it out.
    await new Promise((r) => setTimeout(r, 10_000));
    const before = rssKb(child.pid!);
    const holders: Worker[] = [];
    const hold = async (connections: number): Promise<number> => {
      const task: LoadTask = {
        host: '127.0.0.1', port, path: PATH, connections, mode: 'idle', message: MESSAGE,
        window: 0, warmupMs: 0, durationMs: 0, ratePerSec: 0,
      };
      const w = loadWorker(task);
      holders.push(w);
      await new Promise<void>((resolve, reject) => {
        w.on('message', (m: { connected?: number; error?: string }) => {
          if (m.connected !== undefined) resolve();
          if (m.error) reject(new Error(m.error));
        });
        w.on('error', reject);
      });
      await new Promise((r) => setTimeout(r, 5000));
      return rssKb(child.pid!);
    };
    const middle = await hold(half);
    const after = await hold(IDLE_SESSIONS - half);
    for (const w of holders) w.postMessage('close');
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all(holders.map((w) => w.terminate()));
    return {
      sessions: IDLE_SESSIONS,
      bytesPerSession: ((after - middle) * 1024) / (IDLE_SESSIONS - half),
      rssBeforeMb: before / 1024,
      rssAfterMb: after / 1024,
    };
  } finally {
    await stopProcess(child);
  }
}

function atFixed(m: Measured): { fixed_rate_p50_ms: number; fixed_rate_p99_ms: number; fixed_rate_cpu_us_per_msg: number } {
  return { fixed_rate_p50_ms: +m.fixed.p50Ms.toFixed(3), fixed_rate_p99_ms: +m.fixed.p99Ms.toFixed(3), fixed_rate_cpu_us_per_msg: +m.cpuUsPerMsg.toFixed(2) };
}

export async function run(): Promise<void> {
  const g = await measure(await gsfServer(EVENT_THREADS));
  const raw = await measure(await baselineServer('uws'));
  const ws = await measure(await baselineServer('ws'));
  const idle = await idleSessions();

  const ms = (v: number) => +v.toFixed(3);
  const servers: Array<[string, Measured]> = [['gsf', g], ['raw uWS', raw], ['ws', ws]];
  printReport('sessions', [
    { label: `gsf: session → event → handler → reply (${CONNECTIONS} conns × ${WINDOW} in flight)`, value: g.peak.perSec, unit: 'msgs/s' },
    { label: 'baseline: raw uWebSockets.js echo', value: raw.peak.perSec, unit: 'msgs/s' },
    { label: 'baseline: ws server, same handler inline', value: ws.peak.perSec, unit: 'msgs/s' },
    { label: 'ratio gsf / raw uWS', value: g.peak.perSec / raw.peak.perSec, unit: 'x' },
    { label: 'ratio gsf / ws', value: g.peak.perSec / ws.peak.perSec, unit: 'x' },
    { label: `gsf at half of peak (${Math.round(g.peak.perSec / 2)} msgs/s): p50 round trip (µs)`, value: g.half.p50Ms * 1000, unit: 'µs' },
    { label: 'gsf at half of peak: p99 round trip (µs)', value: g.half.p99Ms * 1000, unit: 'µs' },
    { label: 'raw uWS at half of its peak: p99 round trip (µs)', value: raw.half.p99Ms * 1000, unit: 'µs' },
    { label: 'ws at half of its peak: p99 round trip (µs)', value: ws.half.p99Ms * 1000, unit: 'µs' },
    ...servers.flatMap(([name, m]) => [
      { label: `${name} at ${FIXED_RATE} msgs/s: server CPU per message`, value: m.cpuUsPerMsg, unit: 'µs/msg' },
      { label: `${name} at ${FIXED_RATE} msgs/s: p99 round trip (µs)`, value: m.fixed.p99Ms * 1000, unit: 'µs' },
    ]),
    { label: `idle sessions held by one gsf process`, value: idle.sessions, unit: 'sessions' },
    { label: 'resident memory per idle session (RSS slope over the second half)', value: idle.bytesPerSession, unit: 'bytes' },
  ], {
    cores: os.availableParallelism(), event_threads: EVENT_THREADS, fixed_rate: FIXED_RATE, load_threads: LOAD_THREADS, connections: CONNECTIONS, window: WINDOW,
    gsf: { msgs_per_sec: Math.round(g.peak.perSec), half_load_per_sec: Math.round(g.peak.perSec / 2), p50_ms: ms(g.half.p50Ms), p99_ms: ms(g.half.p99Ms), ...atFixed(g) },
    baseline_uws_echo: { msgs_per_sec: Math.round(raw.peak.perSec), p50_ms: ms(raw.half.p50Ms), p99_ms: ms(raw.half.p99Ms), ...atFixed(raw) },
    baseline_ws_inline: { msgs_per_sec: Math.round(ws.peak.perSec), p50_ms: ms(ws.half.p50Ms), p99_ms: ms(ws.half.p99Ms), ...atFixed(ws) },
    ratio_vs_uws: +(g.peak.perSec / raw.peak.perSec).toFixed(3),
    ratio_vs_ws: +(g.peak.perSec / ws.peak.perSec).toFixed(2),
    idle: { sessions: idle.sessions, bytes_per_session: Math.round(idle.bytesPerSession), rss_before_mb: +idle.rssBeforeMb.toFixed(1), rss_after_mb: +idle.rssAfterMb.toFixed(1) },
  });
}
