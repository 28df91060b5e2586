/**
 * bench/reload: a plugin hot reload under half of peak session load, against the steady state
 * of the same run. A `gsf start` process serves an echo plugin kept in a temporary folder; the
 * load generator (bench/ws-load-worker.ts: raw sockets on worker threads, open loop at half of
 * the server's measured peak, every send time recorded) runs a window in which the plugin is
 * edited and reloaded over REST (`POST /v1/plugins/reload`). Per round: how long the reload
 * took, the p99 round trip of messages sent before it (steady state) and while it ran, and
 * every message that never got an answer (lost) or got an error frame.
 * Goals: the reload completes in < 2 s, no message is lost, p99 during it < 10x steady state.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { printReport, type BenchRow } from './report.ts';
import { freePort, stopProcess } from './processes.ts';
import { CONNECTIONS, FRAMES, LOAD_THREADS, WARMUP_MS, WINDOW, load, loadWorker, median } from './session-load.ts';
import { gsfServer } from './session-servers.ts';
import type { LoadResult, LoadTask } from './ws-load-worker.ts';

const ROUNDS = Number(process.env.GSF_BENCH_ROUNDS ?? 3);
const EVENT_THREADS = Number(process.env.GSF_BENCH_EVENT_THREADS ?? Math.max(1, os.availableParallelism() - 1));
/** Steady state measured before the reload starts, and load kept after it. */
const STEADY_MS = 3000;
const AFTER_MS = 4000;
/** After the window, how long every message still owed an answer may take before it counts as lost. */
const DRAIN_MS = 10_000;
const GOALS = { reload_ms: 2000, lost: 0, p99_ratio: 10 };

/** The benchmark plugin, version `n`: an echo (what bench/sessions measures). */
function writePlugin(dir: string, n: number): void {
  fs.writeFileSync(path.join(dir, 'index.ts'), `import { definePlugin } from 'gsf';

// Version ${n}: what a game team changes between two reloads.
export default definePlugin({
  name: 'reload-bench',
  version: '1.0.${n}',
  register(api) {
    api.sessions.onMessage('echo', (body, msg) => msg.reply(body));
  },
});
`);
}

const now = (): number => performance.timeOrigin + performance.now();

interface Stamped {
  /** Round trips (µs) and when each message was sent (ms since the epoch). */
  rtts: number[];
  sentAt: number[];
  sent: number;
  unanswered: number;
  errors: number;
  others: number;
}

/** The open-loop load with send times and a drain at the end; `onStart` runs when every thread measures. */
async function stampedLoad(port: number, ratePerSec: number, durationMs: number, onStart: () => void): Promise<Stamped> {
  let counting = 0;
  const results = await Promise.all(Array.from({ length: LOAD_THREADS }, (_v, i) => new Promise<LoadResult>((resolve, reject) => {
    const frames = FRAMES.json;
    const task: LoadTask = {
      host: '127.0.0.1', port, path: `/?version=1.0.0&codec=${frames.codec}`,
      connections: Math.floor(CONNECTIONS / LOAD_THREADS) + (i < CONNECTIONS % LOAD_THREADS ? 1 : 0), mode: 'rate',
      message: frames.message, binary: frames.binary, expect: frames.expect, errorMark: frames.errorMark,
      window: WINDOW, warmupMs: WARMUP_MS, durationMs, ratePerSec: ratePerSec / LOAD_THREADS, intervalMs: 0,
      drainMs: DRAIN_MS, stamps: true,
    };
    const w = loadWorker(task);
    w.on('message', (m: { counting?: boolean; done?: LoadResult; error?: string }) => {
      if (m.counting && ++counting === LOAD_THREADS) onStart();
      if (m.done) resolve(m.done);
      if (m.error) reject(new Error(m.error));
      if (m.done || m.error) void w.terminate();
    });
    w.on('error', reject);
  })));
  const sum = (f: (r: LoadResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  return {
    rtts: results.flatMap((r) => r.rtts), sentAt: results.flatMap((r) => r.sentAt ?? []),
    sent: sum((r) => r.sent), unanswered: sum((r) => r.unanswered ?? 0), errors: sum((r) => r.errors), others: sum((r) => r.others),
  };
}

/** p50 and p99 (ms) of the round trips of messages sent in [from, to). */
function percentiles(l: Stamped, from: number, to: number): { p50: number; p99: number; count: number } {
  const rtts = l.rtts.filter((_r, i) => l.sentAt[i]! >= from && l.sentAt[i]! < to).sort((a, b) => a - b);
  const at = (p: number): number => (rtts.length === 0 ? NaN : rtts[Math.min(rtts.length - 1, Math.floor(rtts.length * p))]! / 1000);
  return { p50: at(0.5), p99: at(0.99), count: rtts.length };
}

interface Round {
  /** The peak measured right before the round; the round's load is half of it. */
  peak: number;
  reloadMs: number;
  serverMs: number;
  loadMs: number;
  steady: ReturnType<typeof percentiles>;
  during: ReturnType<typeof percentiles>;
  after: ReturnType<typeof percentiles>;
  sent: number;
  lost: number;
  errors: number;
}

async function round(port: number, apiPort: number, rate: number, dir: string, n: number): Promise<Omit<Round, 'peak'>> {
  let reload: Promise<{ start: number; end: number; body: Record<string, unknown>; status: number }> | null = null;
  let windowStart = 0;
  const l = await stampedLoad(port, rate, STEADY_MS + AFTER_MS, () => {
    windowStart = now();
    setTimeout(() => {
      writePlugin(dir, n);
      const start = now();
      reload = fetch(`http://127.0.0.1:${apiPort}/v1/plugins/reload`, { method: 'POST' })
        .then(async (res) => ({ start, end: now(), status: res.status, body: await res.json() as Record<string, unknown> }));
    }, STEADY_MS);
  });
  const r = await reload!;
  if (process.env.GSF_BENCH_RELOAD_TIMELINE) {
    for (let t = r.start - 500; t < r.end + 1500; t += 100) {
      const b = percentiles(l, t, t + 100);
      process.stderr.write(`${Math.round(t - r.start)}ms: n=${b.count} p50=${b.p50.toFixed(1)} p99=${b.p99.toFixed(1)}\n`);
    }
    process.stderr.write(`reload ${Math.round(r.end - r.start)} ms, load ${String(r.body.load_ms)}\n`);
  }
  const reloaded = r.body.reloaded as unknown[] | undefined;
  if (r.status !== 200 || reloaded?.length !== 1) throw new Error(`the reload failed: ${r.status} ${JSON.stringify(r.body)}`);
  return {
    reloadMs: r.end - r.start, serverMs: r.body.duration_ms as number, loadMs: r.body.load_ms as number,
    steady: percentiles(l, windowStart, r.start),
    during: percentiles(l, r.start, r.end),
    after: percentiles(l, r.end, r.end + 1000),
    sent: l.sent, lost: l.unanswered, errors: l.errors + l.others,
  };
}

export async function run(): Promise<void> {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-reload-')), 'reload-bench');
  fs.mkdirSync(dir);
  writePlugin(dir, 0);
  const apiPort = await freePort();
  const server = await gsfServer(EVENT_THREADS, {}, dir, { api_service_port: apiPort });
  const rounds: Round[] = [];
  try {
    await load(server.port, { mode: 'peak', durationMs: 1000 }); // warm-up
    // The peak is measured again right before each round: what half of it is moves with
    // whatever else the machine runs.
    for (let i = 1; i <= ROUNDS; i++) {
      const peak = (await load(server.port, { mode: 'peak', durationMs: 2000 })).perSec;
      rounds.push({ ...await round(server.port, apiPort, peak / 2, dir, i), peak });
    }
  } finally {
    await stopProcess(server.child);
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
  report(rounds);
}

/** A port free now (the API service's, given in the manifest: the listening line's is read for the WebSocket port). */
function report(rounds: Round[]): void {
  const med = (f: (r: Round) => number): number => median(rounds.map(f));
  const peak = med((r) => r.peak);
  const ratios = rounds.map((r) => r.during.p99 / r.steady.p99);
  const lost = rounds.reduce((a, r) => a + r.lost, 0);
  const errors = rounds.reduce((a, r) => a + r.errors, 0);
  const figures = {
    reload_ms: +med((r) => r.reloadMs).toFixed(1), reload_ms_max: +Math.max(...rounds.map((r) => r.reloadMs)).toFixed(1),
    load_ms: +med((r) => r.loadMs).toFixed(1),
    p99_steady_ms: +med((r) => r.steady.p99).toFixed(3), p99_during_ms: +med((r) => r.during.p99).toFixed(3),
    p99_after_ms: +med((r) => r.after.p99).toFixed(3), p99_ratio: +median(ratios).toFixed(2), p99_ratio_max: +Math.max(...ratios).toFixed(2),
    p50_steady_ms: +med((r) => r.steady.p50).toFixed(3), p50_during_ms: +med((r) => r.during.p50).toFixed(3),
    sent: rounds.reduce((a, r) => a + r.sent, 0), lost, errors,
  };
  const rows: BenchRow[] = [
    { label: `peak before each round, echo (${CONNECTIONS} conns × ${WINDOW} in flight; median)`, value: peak, unit: 'msgs/s' },
    { label: 'load of each round: half of that peak, open loop (median)', value: peak / 2, unit: 'msgs/s' },
    { label: `reload: request to answer (median of ${rounds.length} rounds; goal < ${GOALS.reload_ms})`, value: figures.reload_ms, unit: 'ms' },
    { label: 'reload: slowest round', value: figures.reload_ms_max, unit: 'ms' },
    { label: 'reload: new event threads loaded (median)', value: figures.load_ms, unit: 'ms' },
    { label: 'baseline: p99 round trip in steady state, same rounds (µs)', value: figures.p99_steady_ms * 1000, unit: 'µs' },
    { label: 'p99 round trip of messages sent during the reload (µs)', value: figures.p99_during_ms * 1000, unit: 'µs' },
    { label: 'p99 round trip in the second after it (µs)', value: figures.p99_after_ms * 1000, unit: 'µs' },
    { label: `ratio p99 during / steady (median; goal < ${GOALS.p99_ratio})`, value: figures.p99_ratio, unit: 'x' },
    { label: 'ratio p99 during / steady, worst round', value: figures.p99_ratio_max, unit: 'x' },
    { label: 'messages sent in the measured windows', value: figures.sent, unit: 'msgs' },
    { label: 'messages never answered (lost; must be 0)', value: lost, unit: 'msgs' },
    { label: 'error or unexpected frames (must be 0)', value: errors, unit: 'frames' },
  ];
  printReport('reload', rows, {
    cores: os.availableParallelism(), event_threads: EVENT_THREADS, rounds: rounds.length, load_threads: LOAD_THREADS,
    connections: CONNECTIONS, peak_per_sec: Math.round(peak), load_per_sec: Math.round(peak / 2),
    ...figures,
    baseline: { p99_steady_ms: figures.p99_steady_ms, p50_steady_ms: figures.p50_steady_ms },
    goals: GOALS,
    met: { reload_ms: figures.reload_ms_max < GOALS.reload_ms, lost: lost === 0 && errors === 0, p99_ratio: figures.p99_ratio_max < GOALS.p99_ratio },
    per_round: rounds.map((r) => ({
      load_per_sec: Math.round(r.peak / 2), reload_ms: +r.reloadMs.toFixed(1), server_ms: r.serverMs, load_ms: r.loadMs,
      p99_steady_ms: +r.steady.p99.toFixed(3), p99_during_ms: +r.during.p99.toFixed(3), during_samples: r.during.count,
      p99_after_ms: +r.after.p99.toFixed(3), sent: r.sent, lost: r.lost, errors: r.errors,
    })),
  });
}
