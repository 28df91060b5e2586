/**
 * bench/cluster: messages to a session on another server against messages to a session on the
 * same server, in the same run. Two `gsf start` processes (one event thread each) share one
 * Redis (`redis-server`, no persistence). A sender connected to server A sends `relay {to}`;
 * A's handler sends `relayed` to session `to`, which is on A (same server) or on B (cross
 * server: A's outbox → the routing script in Redis → B's stream → B's socket).
 *
 * Measured in interleaved rounds (medians): peak messages per second; latency from the
 * sender's write to the receiver's read at a fixed rate (10,000 msgs/s); and, over every
 * measured window, the CPU time of A, B and Redis and the time their threads waited for a CPU
 * while runnable (both from /proc), and the batches A flushed (its
 * `rpc_stat` counters), from which Redis's cost per flush and per message is fitted: the cost
 * per message that the README's capacity estimate is built on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workerExecArgv } from '../src/events/main/dispatcher.ts';
import { printReport } from './report.ts';
import { freePort, processCpuMs, processRunQueueMs, stopProcess } from './processes.ts';
import { median } from './session-load.ts';
import type { RelayResult, RelayTask } from './cluster-load-worker.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.GSF_BENCH_ROUNDS ?? 3);
const RATE = Number(process.env.GSF_BENCH_FIXED_RATE ?? 10_000);
/** A rate low enough that most batches carry one message: Redis's cost per flush. */
const LOW_RATE = Number(process.env.GSF_BENCH_LOW_RATE ?? 500);
const PAIRS = Number(process.env.GSF_BENCH_PAIRS ?? 32);
const WINDOW = Number(process.env.GSF_BENCH_WINDOW ?? 32);
const THREADS = Number(process.env.GSF_BENCH_LOAD_THREADS ?? 1);
const DURATION_MS = Number(process.env.GSF_BENCH_DURATION_MS ?? 3000);

/** Spawns a process; resolves with the groups of `ready` once its standard output matches. */
function spawnUntil(cmd: string, args: string[], ready: RegExp): Promise<{ child: ChildProcess; m: RegExpExecArray }> {
  const child = spawn(cmd, args, { cwd: path.join(here, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('error', (err) => reject(new Error(`${cmd}: ${err.message}${cmd === 'redis-server' ? ' (Debian: apt-get install redis-server; .ci/run does it)' : ''}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, m });
    });
    child.on('exit', (code) => reject(new Error(`${cmd} exited with ${code}: ${out}`)));
  });
}

interface Server {
  child: ChildProcess;
  ws: number;
  api: number;
}

async function startServer(redisPort: number): Promise<Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-cluster-'));
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'EventDispatcher', arguments: { event_threads_size: 1, slow_event_log_threshold_in_ms: 60000 } },
      { name: 'ApiService', arguments: { api_service_port: 0 } },
      { name: 'CounterService', arguments: {} },
      { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0 } },
      { name: 'Cluster', arguments: { redis_url: `redis://127.0.0.1:${redisPort}` } },
    ],
    plugins: [path.join(here, 'plugins', 'cluster-bench')],
  }));
  const { child, m } = await spawnUntil(process.execPath, [path.join(here, '..', 'bin', 'gsf.mjs'), 'start', '--manifest', manifest],
    /api=[^:\s]+:(\d+) websocket=[^:\s]+:(\d+)/);
  return { child, api: Number(m[1]), ws: Number(m[2]) };
}

async function counter(s: Server, name: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${s.api}/v1/counters/rpc_stat/${name}/`);
  return ((await r.json()) as { value: number }).value;
}

interface Window {
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  delivered: number;
  others: number;
  /** CPU µs per delivered message, per process. */
  cpu: Record<'a' | 'b' | 'redis', number>;
  /** Milliseconds per second each process's threads waited for a CPU while runnable. */
  runQueue: Record<'a' | 'b' | 'redis', number>;
  /** CPU ms of Redis over the window, and A's batches and messages flushed over it. */
  redisMs: number;
  batches: number;
  flushed: number;
}

interface Setup {
  a: Server;
  b: Server;
  redis: ChildProcess;
}

/** One measured window of relayed messages from A to `receiver`. */
async function relay(setup: Setup, receiver: Server, mode: RelayTask['mode'], rate = RATE): Promise<Window> {
  const pids = { a: setup.a.child.pid!, b: setup.b.child.pid!, redis: setup.redis.pid! };
  const cpu0: Record<string, number> = {};
  const cpu1: Record<string, number> = {};
  const wait0: Record<string, number> = {};
  const wait1: Record<string, number> = {};
  let flushed0: Promise<[number, number]> | null = null;
  let flushed1: Promise<[number, number]> | null = null;
  const flushed = (): Promise<[number, number]> => Promise.all([counter(setup.a, 'batches_sent'), counter(setup.a, 'messages_sent')]);
  let counting = 0;
  let ended = false;
  const results = await Promise.all(Array.from({ length: THREADS }, () => new Promise<RelayResult>((resolve, reject) => {
    const task: RelayTask = {
      host: '127.0.0.1', senderPort: setup.a.ws, receiverPort: receiver.ws, pairs: Math.ceil(PAIRS / THREADS), mode, window: WINDOW,
      ratePerSec: rate / THREADS, warmupMs: 1000, durationMs: DURATION_MS,
    };
    const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(path.join(here, 'cluster-load-worker.ts'))});`;
    const w = new Worker(code, { eval: true, workerData: task, execArgv: workerExecArgv() });
    w.on('message', (m: { counting?: boolean; done?: RelayResult; error?: string }) => {
      if (m.counting && ++counting === THREADS) {
        for (const [name, pid] of Object.entries(pids)) {
          cpu0[name] = processCpuMs(pid);
          wait0[name] = processRunQueueMs(pid);
        }
        flushed0 = flushed();
      }
      if (m.done && !ended) {
        ended = true;
        for (const [name, pid] of Object.entries(pids)) {
          cpu1[name] = processCpuMs(pid);
          wait1[name] = processRunQueueMs(pid);
        }
        flushed1 = flushed();
      }
      if (m.done) resolve(m.done);
      if (m.error) reject(new Error(m.error));
      if (m.done || m.error) void w.terminate();
    });
    w.on('error', reject);
  })));
  const [[b0, m0], [b1, m1]] = await Promise.all([flushed0!, flushed1!]);
  const seconds = Math.max(...results.map((r) => r.seconds));
  const lat = results.flatMap((r) => r.latencies).sort((x, y) => x - y);
  const pct = (p: number): number => (lat.length === 0 ? NaN : lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]! / 1000);
  const delivered = results.reduce((n, r) => n + r.delivered, 0);
  const per = (name: string): number => ((cpu1[name]! - cpu0[name]!) * 1000) / Math.max(1, delivered);
  const waited = (name: string): number => (wait1[name]! - wait0[name]!) / seconds;
  return {
    perSec: delivered / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99), delivered, others: results.reduce((n, r) => n + r.others, 0),
    cpu: { a: per('a'), b: per('b'), redis: per('redis') }, runQueue: { a: waited('a'), b: waited('b'), redis: waited('redis') }, redisMs: cpu1.redis! - cpu0.redis!, batches: b1 - b0, flushed: m1 - m0,
  };
}

const r3 = (v: number): number => +v.toFixed(3);
const mid = (ws: Window[], key: (w: Window) => number): Window => [...ws].sort((x, y) => key(x) - key(y))[Math.floor(ws.length / 2)]!;

export async function run(): Promise<void> {
  const redisPort = await freePort();
  const { child: redis } = await spawnUntil('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    /Ready to accept connections/);
  const setup: Setup = { a: await startServer(redisPort), b: await startServer(redisPort), redis };
  await new Promise((r) => setTimeout(r, 1500)); // both have heartbeated: each knows the other
  try {
    const { a, b } = setup;
    await relay(setup, a, 'peak');
    await relay(setup, b, 'peak');
    const peaks = { same: [] as Window[], cross: [] as Window[] };
    const rated = { same: [] as Window[], cross: [] as Window[] };
    const low: Window[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      peaks.same.push(await relay(setup, a, 'peak'));
      peaks.cross.push(await relay(setup, b, 'peak'));
    }
    for (let i = 0; i < ROUNDS; i++) {
      rated.same.push(await relay(setup, a, 'rate'));
      rated.cross.push(await relay(setup, b, 'rate'));
      low.push(await relay(setup, b, 'rate', LOW_RATE));
    }
    const peakOf = (k: 'same' | 'cross'): number => median(peaks[k].map((w) => w.perSec));
    const ratio = peakOf('cross') / peakOf('same');
    const s = mid(rated.same, (w) => w.p99Ms);
    const c = mid(rated.cross, (w) => w.p99Ms);
    const pc = mid(peaks.cross, (w) => w.perSec);
    // Redis's CPU = per flush × batches + per message × messages: the per-flush cost from the
    // low rate (about one message a batch), the per-message cost from the peak rounds.
    const perFlushUs = median(low.map((w) => (w.redisMs * 1000) / Math.max(1, w.batches)));
    const perMessageUs = Math.max(0, median(peaks.cross.map((w) => (w.redisMs * 1000 - perFlushUs * w.batches) / Math.max(1, w.flushed))));
    const msgsPerBatch = (w: Window): number => w.flushed / Math.max(1, w.batches);
    const others = [...peaks.same, ...peaks.cross, ...rated.same, ...rated.cross, ...low].reduce((n, w) => n + w.others, 0);
    printReport('cluster', [
      { label: 'same server, peak', value: peakOf('same'), unit: 'msgs/s' },
      { label: 'other server (through Redis), peak', value: peakOf('cross'), unit: 'msgs/s' },
      { label: 'ratio other / same', value: ratio, unit: 'x' },
      { label: `same server, p50 at ${RATE} msgs/s`, value: s.p50Ms * 1000, unit: 'µs' },
      { label: `same server, p99 at ${RATE} msgs/s`, value: s.p99Ms * 1000, unit: 'µs' },
      { label: `other server, p50 at ${RATE} msgs/s`, value: c.p50Ms * 1000, unit: 'µs' },
      { label: `other server, p99 at ${RATE} msgs/s`, value: c.p99Ms * 1000, unit: 'µs' },
      { label: 'CPU per message at peak, same server: A', value: mid(peaks.same, (w) => w.perSec).cpu.a, unit: 'µs/msg' },
      { label: 'CPU per message at peak, other server: A', value: pc.cpu.a, unit: 'µs/msg' },
      { label: 'CPU per message at peak, other server: B', value: pc.cpu.b, unit: 'µs/msg' },
      { label: 'CPU per message at peak, other server: Redis', value: pc.cpu.redis, unit: 'µs/msg' },
      { label: `run-queue wait at ${RATE} msgs/s, same server: A`, value: s.runQueue.a, unit: 'ms/s' },
      { label: `run-queue wait at ${RATE} msgs/s, other server: A`, value: c.runQueue.a, unit: 'ms/s' },
      { label: `run-queue wait at ${RATE} msgs/s, other server: B`, value: c.runQueue.b, unit: 'ms/s' },
      { label: `run-queue wait at ${RATE} msgs/s, other server: Redis`, value: c.runQueue.redis, unit: 'ms/s' },
      { label: `messages per batch at peak / at ${RATE} msgs/s`, value: msgsPerBatch(pc), unit: `/ ${msgsPerBatch(c).toFixed(1)}` },
      { label: 'Redis CPU per flush (fitted)', value: perFlushUs, unit: 'µs/flush' },
      { label: 'Redis CPU per message in a batch (fitted)', value: perMessageUs, unit: 'µs/msg' },
    ], {
      pairs: PAIRS, window: WINDOW, rounds: ROUNDS, rate: RATE,
      same: {
        peak_msgs_per_sec: Math.round(peakOf('same')), p50_ms: r3(s.p50Ms), p99_ms: r3(s.p99Ms), peak_cpu_us_per_msg: { a: r3(mid(peaks.same, (w) => w.perSec).cpu.a) },
        rate_run_queue_ms_per_s: { a: r3(s.runQueue.a) },
      },
      cross: {
        peak_msgs_per_sec: Math.round(peakOf('cross')), p50_ms: r3(c.p50Ms), p99_ms: r3(c.p99Ms),
        peak_cpu_us_per_msg: { a: r3(pc.cpu.a), b: r3(pc.cpu.b), redis: r3(pc.cpu.redis) },
        rate_cpu_us_per_msg: { a: r3(c.cpu.a), b: r3(c.cpu.b), redis: r3(c.cpu.redis) },
        rate_run_queue_ms_per_s: { a: r3(c.runQueue.a), b: r3(c.runQueue.b), redis: r3(c.runQueue.redis) },
        messages_per_batch: { peak: r3(msgsPerBatch(pc)), rate: r3(msgsPerBatch(c)) },
      },
      redis_fit: { us_per_flush: r3(perFlushUs), us_per_message: r3(perMessageUs) },
      baseline: 'same',
      ratio_cross_over_same: r3(ratio),
      goals: { ratio_at_least_0_5: ratio >= 0.5, p99_under_5ms_at_rate: c.p99Ms < 5 },
      unexpected_frames: others,
    });
  } finally {
    await stopProcess(setup.a.child);
    await stopProcess(setup.b.child);
    await stopProcess(redis);
  }
}
