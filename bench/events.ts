/**
 * bench/events: events per second through native queue → piscina workers → handler →
 * completion, against baselines measured in the same run (interleaved rounds, medians):
 * - trivial handler over 10k tags vs one piscina task per event;
 * - ~50 µs CPU-bound handler vs a single-thread in-process executor.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { native } from '../src/native.ts';
import { startServer, type GsfServer } from '../src/index.ts';
import { calibrate, cpuWork } from './cpu-work.ts';
import { workerExecArgv } from '../src/events/dispatcher.ts';
import { printReport } from './report.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const THREADS = Math.max(2, os.availableParallelism());
const TAGS = 10_000;

async function untilCompleted(target: number): Promise<void> {
  while (native.queueStats().completed_total < target) await new Promise((r) => setTimeout(r, 1));
}

/** Pushes `count` events round-robin over TAGS tags and returns events/s until all complete. */
async function gsfRate(server: GsfServer, event: string, payload: unknown, count: number): Promise<number> {
  const base = native.queueStats().completed_total;
  const tags = Array.from({ length: TAGS }, (_, i) => 10_000_000_000 + i);
  const start = performance.now();
  for (let i = 0; i < count; i += 5000) {
    const end = Math.min(count, i + 5000);
    for (let j = i; j < end; j++) server.invoke(event, payload, { tag: tags[j % TAGS] });
    await new Promise((r) => setImmediate(r));
  }
  await untilCompleted(base + count);
  return count / ((performance.now() - start) / 1000);
}

async function baselineRate(pool: Piscina, kind: 'noop' | 'cpu', iterations: number, count: number): Promise<number> {
  const start = performance.now();
  const inflight: Array<Promise<unknown>> = [];
  for (let i = 0; i < count; i++) {
    inflight.push(pool.run({ kind, iterations, tag: i % TAGS }));
    if (inflight.length >= 2000) await Promise.all(inflight.splice(0));
  }
  await Promise.all(inflight);
  return count / ((performance.now() - start) / 1000);
}

export async function run(): Promise<void> {
  const iterations = calibrate(50);
  const server = await startServer({
    manifest: {
      components: [
        { name: 'EventDispatcher', arguments: { event_threads_size: THREADS, slow_event_log_threshold_in_ms: 60000 } },
        { name: 'ApiService', arguments: { api_service_port: 0 } },
        { name: 'Logging', arguments: { minloglevel: 1 } },
      ],
      plugins: [path.join(here, 'plugins', 'bench')],
    },
    dir: here,
  });
  const pool = new Piscina({ filename: path.join(here, 'baseline-worker.ts'), minThreads: THREADS, maxThreads: THREADS, execArgv: workerExecArgv() });
  try {
    await gsfRate(server, 'bench.noop', undefined, 50_000); // warm-up
    await baselineRate(pool, 'noop', 0, 5_000);
    // Interleaved rounds, medians: a busy moment of the machine hits both sides alike.
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const gsfRuns: number[] = [];
    const baseRuns: number[] = [];
    for (let i = 0; i < 3; i++) {
      gsfRuns.push(await gsfRate(server, 'bench.noop', undefined, 1_000_000));
      baseRuns.push(await baselineRate(pool, 'noop', 0, 100_000));
    }
    const noop = median(gsfRuns);
    const noopBase = median(baseRuns);
    const cpu = await gsfRate(server, 'bench.cpu', iterations, 40_000);
    const single = (() => {
      const start = performance.now();
      for (let i = 0; i < 20_000; i++) cpuWork(iterations);
      return 20_000 / ((performance.now() - start) / 1000);
    })();
    printReport('events', [
      { label: `gsf, trivial handler, ${TAGS} tags, ${THREADS} workers`, value: noop, unit: 'events/s' },
      { label: 'baseline: one piscina task per event', value: noopBase, unit: 'events/s' },
      { label: 'ratio', value: noop / noopBase, unit: 'x' },
      { label: 'gsf, ~50 µs CPU-bound handler', value: cpu, unit: 'events/s' },
      { label: 'baseline: single-thread in-process executor', value: single, unit: 'events/s' },
      { label: 'ratio', value: cpu / single, unit: 'x' },
    ], {
      threads: THREADS,
      trivial: { gsf_events_per_sec: Math.round(noop), baseline_events_per_sec: Math.round(noopBase), ratio: +(noop / noopBase).toFixed(2) },
      cpu_bound: { gsf_events_per_sec: Math.round(cpu), baseline_events_per_sec: Math.round(single), ratio: +(cpu / single).toFixed(2) },
    });
  } finally {
    await pool.destroy();
    await server.stop();
  }
}
