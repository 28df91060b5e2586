/**
 * bench/cluster: messages to a session on another server against messages to a session on the
 * same server, in the same run. Two `gsf start` processes (one event thread each) share one
 * Redis (`redis-server`, no persistence). A sender connected to server A sends `relay {to}`;
 * A's handler sends `relayed` to session `to`, which is on A (same server) or on B (cross
 * server: A's outbox → the routing script in Redis → B's stream → B's socket). Measured in
 * interleaved rounds (medians): peak messages per second, and latency from the sender's write
 * to the receiver's read at a fixed rate (10,000 msgs/s), with the CPU time each process
 * (A, B, Redis) spends per message at that rate, from /proc.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workerExecArgv } from '../src/events/dispatcher.ts';
import { printReport } from './report.ts';
import { processCpuMs, startProcess, stopProcess } from './processes.ts';
import { median } from './session-load.ts';
import type { RelayResult, RelayTask } from './cluster-load-worker.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.GSF_BENCH_ROUNDS ?? 3);
const RATE = Number(process.env.GSF_BENCH_FIXED_RATE ?? 10_000);
const PAIRS = Number(process.env.GSF_BENCH_PAIRS ?? 32);
const WINDOW = Number(process.env.GSF_BENCH_WINDOW ?? 32);
const THREADS = Number(process.env.GSF_BENCH_LOAD_THREADS ?? 1);
const DURATION_MS = Number(process.env.GSF_BENCH_DURATION_MS ?? 3000);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function startRedis(): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.on('error', () => reject(new Error('redis-server is not installed (Debian: apt-get install redis-server; .ci/run does it)')));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return { child, port };
}

async function startServer(redisPort: number): Promise<{ child: ChildProcess; port: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-cluster-'));
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'EventDispatcher', arguments: { event_threads_size: 1, slow_event_log_threshold_in_ms: 60000 } },
      { name: 'ApiService', arguments: { api_service_port: 0 } },
      { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0 } },
      { name: 'Cluster', arguments: { redis_url: `redis://127.0.0.1:${redisPort}` } },
    ],
    plugins: [path.join(here, 'plugins', 'cluster-bench')],
  }));
  return startProcess([path.join(here, '..', 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], /websocket=[^:\s]+:(\d+)/);
}

interface Measure {
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  sent: number;
  delivered: number;
  others: number;
}

async function relay(senderPort: number, receiverPort: number, mode: RelayTask['mode'], onWindow?: (edge: 'start' | 'end') => void): Promise<Measure> {
  let counting = 0;
  const results = await Promise.all(Array.from({ length: THREADS }, () => new Promise<RelayResult>((resolve, reject) => {
    const task: RelayTask = {
      host: '127.0.0.1', senderPort, receiverPort, pairs: Math.ceil(PAIRS / THREADS), mode, window: WINDOW,
      ratePerSec: RATE / THREADS, warmupMs: 1000, durationMs: DURATION_MS,
    };
    const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(path.join(here, 'cluster-load-worker.ts'))});`;
    const w = new Worker(code, { eval: true, workerData: task, execArgv: workerExecArgv() });
    w.on('message', (m: { counting?: boolean; done?: RelayResult; error?: string }) => {
      if (m.counting && ++counting === THREADS) onWindow?.('start');
      if (m.done) {
        onWindow?.('end');
        resolve(m.done);
      }
      if (m.error) reject(new Error(m.error));
      if (m.done || m.error) void w.terminate();
    });
    w.on('error', reject);
  })));
  const seconds = Math.max(...results.map((r) => r.seconds));
  const lat = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const pct = (p: number): number => (lat.length === 0 ? NaN : lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]! / 1000);
  const sum = (f: (r: RelayResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  return { perSec: sum((r) => r.delivered) / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99), sent: sum((r) => r.sent), delivered: sum((r) => r.delivered), others: sum((r) => r.others) };
}

/** CPU microseconds per delivered message of each process over a fixed-rate window. */
async function atRate(senderPort: number, receiverPort: number, pids: Record<string, number>): Promise<{ m: Measure; cpu: Record<string, number> }> {
  const start: Record<string, number> = {};
  const end: Record<string, number> = {};
  const m = await relay(senderPort, receiverPort, 'rate', (edge) => {
    for (const [name, pid] of Object.entries(pids)) (edge === 'start' ? start : end)[name] = processCpuMs(pid);
  });
  const cpu: Record<string, number> = {};
  for (const name of Object.keys(pids)) cpu[name] = ((end[name]! - start[name]!) * 1000) / Math.max(1, m.delivered);
  return { m, cpu };
}

const r3 = (v: number): number => +v.toFixed(3);

export async function run(): Promise<void> {
  const redis = await startRedis();
  const a = await startServer(redis.port);
  const b = await startServer(redis.port);
  await new Promise((r) => setTimeout(r, 1500)); // both have heartbeated: each knows the other
  const pids = { a: a.child.pid!, b: b.child.pid!, redis: redis.child.pid! };
  try {
    const same = (): Promise<Measure> => relay(a.port, a.port, 'peak');
    const cross = (): Promise<Measure> => relay(a.port, b.port, 'peak');
    await same();
    await cross();
    const peaks = { same: [] as Measure[], cross: [] as Measure[] };
    for (let i = 0; i < ROUNDS; i++) {
      peaks.same.push(await same());
      peaks.cross.push(await cross());
    }
    const rated = { same: [] as Array<Awaited<ReturnType<typeof atRate>>>, cross: [] as Array<Awaited<ReturnType<typeof atRate>>> };
    for (let i = 0; i < ROUNDS; i++) {
      rated.same.push(await atRate(a.port, a.port, pids));
      rated.cross.push(await atRate(a.port, b.port, pids));
    }
    const peak = (k: 'same' | 'cross'): number => median(peaks[k].map((m) => m.perSec));
    // The round with the median p99 at the fixed rate.
    const mid = (k: 'same' | 'cross'): Awaited<ReturnType<typeof atRate>> => [...rated[k]].sort((x, y) => x.m.p99Ms - y.m.p99Ms)[Math.floor(rated[k].length / 2)]!;
    const s = mid('same');
    const c = mid('cross');
    const others = [...peaks.same, ...peaks.cross, ...rated.same.map((x) => x.m), ...rated.cross.map((x) => x.m)].reduce((n, m) => n + m.others, 0);
    const ratio = peak('cross') / peak('same');
    const cpuCross = c.cpu.a! + c.cpu.b! + c.cpu.redis!;
    printReport('cluster', [
      { label: 'same server, peak', value: peak('same'), unit: 'msgs/s' },
      { label: 'other server (through Redis), peak', value: peak('cross'), unit: 'msgs/s' },
      { label: 'ratio other / same', value: ratio, unit: 'x' },
      { label: `same server, p50 at ${RATE} msgs/s`, value: s.m.p50Ms * 1000, unit: 'µs' },
      { label: `same server, p99 at ${RATE} msgs/s`, value: s.m.p99Ms * 1000, unit: 'µs' },
      { label: `other server, p50 at ${RATE} msgs/s`, value: c.m.p50Ms * 1000, unit: 'µs' },
      { label: `other server, p99 at ${RATE} msgs/s`, value: c.m.p99Ms * 1000, unit: 'µs' },
      { label: 'CPU per message, same server: A', value: s.cpu.a!, unit: 'µs/msg' },
      { label: 'CPU per message, other server: A', value: c.cpu.a!, unit: 'µs/msg' },
      { label: 'CPU per message, other server: B', value: c.cpu.b!, unit: 'µs/msg' },
      { label: 'CPU per message, other server: Redis', value: c.cpu.redis!, unit: 'µs/msg' },
    ], {
      pairs: PAIRS, window: WINDOW, rounds: ROUNDS, rate: RATE,
      same: { peak_msgs_per_sec: Math.round(peak('same')), p50_ms: r3(s.m.p50Ms), p99_ms: r3(s.m.p99Ms), cpu_us_per_msg: { a: r3(s.cpu.a!) } },
      cross: {
        peak_msgs_per_sec: Math.round(peak('cross')), p50_ms: r3(c.m.p50Ms), p99_ms: r3(c.m.p99Ms),
        cpu_us_per_msg: { a: r3(c.cpu.a!), b: r3(c.cpu.b!), redis: r3(c.cpu.redis!), total: r3(cpuCross) },
      },
      baseline: 'same',
      ratio_cross_over_same: r3(ratio),
      goals: { ratio_at_least_0_5: ratio >= 0.5, p99_under_5ms_at_rate: c.m.p99Ms < 5 },
      unexpected_frames: others,
    });
  } finally {
    await stopProcess(a.child);
    await stopProcess(b.child);
    await stopProcess(redis.child);
  }
}
