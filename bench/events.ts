/**
 * bench/events: events per second through native queue → piscina workers → handler →
 * completion, against baselines measured in the same run (interleaved rounds, medians):
 * - trivial handler over 10k tags vs one piscina task per event (a pool of the same size);
 * - ~50 µs CPU-bound handler vs the same piscina pool, and vs a single-thread in-process executor;
 * - chained: each event invokes the next event of its own tag from its event thread (10k tags), so
 *   pushes come from every thread, not only the main one.
 * Flags: `--threads=N` event threads (default: the cores, at least 2); `--modes=trivial,chained,cpu`
 * runs only those (default: all); `--rounds=N` interleaved rounds (default 3).
 * Both sides get the same payload per event, and the piscina baseline keeps a bounded number of
 * tasks in flight, submitting one as each finishes (no barrier between batches).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { native } from '../src/native.ts';
import { startServer, type GsfServer } from '../src/index.ts';
import { calibrate, cpuWork } from './cpu-work.ts';
import { workerExecArgv } from '../src/events/main/dispatcher.ts';
import { printReport, type BenchRow } from './report.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const TAGS = 10_000;
/** Events each tag's chain runs in the chained mode (its first pushed by the main thread). */
const CHAIN_LENGTH = 50;
/** Tasks the piscina baseline keeps submitted at once: enough that its workers never wait for the main thread. */
const IN_FLIGHT = 1024;
/** What each trivial event carries, on both sides: a small game message. */
const NOOP_PAYLOAD = { player: 'p-1024', x: 12, y: -3, action: 'move' };
const MODES = ['trivial', 'chained', 'cpu'] as const;
type Mode = typeof MODES[number];

/** The bench's flags (see the header). */
export function parseFlags(flags: string[]): { threads: number; modes: Set<Mode>; rounds: number } {
  const value = (name: string): string | undefined => flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3);
  const count = (name: string, fallback: number): number => {
    const v = value(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got '${v}'`);
    return n;
  };
  const modes = value('modes')?.split(',') ?? [...MODES];
  for (const m of modes) {
    if (!(MODES as readonly string[]).includes(m)) throw new Error(`--modes: unknown mode '${m}' (known: ${MODES.join(', ')})`);
  }
  return { threads: count('threads', Math.max(2, os.availableParallelism())), modes: new Set(modes as Mode[]), rounds: count('rounds', 3) };
}

async function untilCompleted(target: number): Promise<void> {
  while (native.queueStats().completed_total < target) await new Promise((r) => setTimeout(r, 1));
}

/** This thread's CPU time so far (ns), from the kernel's scheduler statistics; null where there are none. */
function threadCpuNs(): number | null {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

/**
 * Pushes `count` events round-robin over TAGS tags and returns events/s until all complete, and
 * the main thread's CPU per invoke (ns: the push loops and the hand-over of their staged events,
 * not the waits between them; null off Linux). With many event threads the main thread's cost
 * bounds the trivial mode: it cannot push more than 1e9 / that many events a second.
 */
async function gsfRate(server: GsfServer, event: string, payload: unknown, count: number): Promise<{ rate: number; mainNs: number | null }> {
  const base = native.queueStats().completed_total;
  const tags = Array.from({ length: TAGS }, (_, i) => 10_000_000_000 + i);
  let cpu: number | null = 0;
  const start = performance.now();
  for (let i = 0; i < count; i += 5000) {
    const end = Math.min(count, i + 5000);
    const before = threadCpuNs();
    for (let j = i; j < end; j++) server.invoke(event, payload, { tag: tags[j % TAGS] });
    await null; // the stage's hand-over, queued as a microtask by the first invoke, runs here
    const after = threadCpuNs();
    cpu = cpu === null || before === null || after === null ? null : cpu + after - before;
    await new Promise((r) => setImmediate(r));
  }
  await untilCompleted(base + count);
  return { rate: count / ((performance.now() - start) / 1000), mainNs: cpu === null ? null : cpu / count };
}

/**
 * Starts one chain of CHAIN_LENGTH events on each of TAGS tags: the main thread pushes the first,
 * each event invokes the next from its event thread. Returns events/s until all complete.
 */
async function chainedRate(server: GsfServer): Promise<number> {
  const base = native.queueStats().completed_total;
  const start = performance.now();
  for (let i = 0; i < TAGS; i++) server.invoke('bench.chain', CHAIN_LENGTH, { tag: 20_000_000_000 + i });
  await untilCompleted(base + TAGS * CHAIN_LENGTH);
  return (TAGS * CHAIN_LENGTH) / ((performance.now() - start) / 1000);
}

/** `count` piscina tasks of `name` with `payload`, `IN_FLIGHT` at a time; returns tasks/s. */
function baselineRate(pool: Piscina, name: 'noop' | 'cpu', payload: unknown, count: number): Promise<number> {
  const start = performance.now();
  let submitted = 0;
  let done = 0;
  return new Promise((resolve, reject) => {
    const submit = (): void => {
      submitted++;
      pool.run(payload, { name }).then(() => {
        if (++done === count) resolve(count / ((performance.now() - start) / 1000));
        else if (submitted < count) submit();
      }, reject);
    };
    for (let i = 0; i < Math.min(IN_FLIGHT, count); i++) submit();
  });
}

/** `count` runs of the CPU-bound handler on this thread, one after another; returns runs/s. */
function singleThreadRate(iterations: number, count: number): number {
  const start = performance.now();
  for (let i = 0; i < count; i++) cpuWork(iterations);
  return count / ((performance.now() - start) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(flags: string[] = []): Promise<void> {
  const { threads: THREADS, modes, rounds: ROUNDS } = parseFlags(flags);
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
    await gsfRate(server, 'bench.noop', NOOP_PAYLOAD, 50_000); // warm-up
    if (modes.has('chained')) await chainedRate(server);
    if (modes.has('trivial')) await baselineRate(pool, 'noop', NOOP_PAYLOAD, 20_000);
    if (modes.has('cpu')) {
      await gsfRate(server, 'bench.cpu', iterations, 4_000);
      await baselineRate(pool, 'cpu', iterations, 4_000);
    }
    // Interleaved rounds (ABAB…), medians: a busy moment of the machine hits both sides alike.
    const noopRuns = { gsf: [] as number[], pool: [] as number[], mainNs: [] as number[] };
    const chainRuns: number[] = [];
    const cpuRuns = { gsf: [] as number[], pool: [] as number[], single: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      if (modes.has('trivial')) {
        const { rate, mainNs } = await gsfRate(server, 'bench.noop', NOOP_PAYLOAD, 1_000_000);
        noopRuns.gsf.push(rate);
        if (mainNs !== null) noopRuns.mainNs.push(mainNs);
        noopRuns.pool.push(await baselineRate(pool, 'noop', NOOP_PAYLOAD, 100_000));
      }
      if (modes.has('chained')) chainRuns.push(await chainedRate(server));
    }
    for (let i = 0; i < ROUNDS && modes.has('cpu'); i++) {
      cpuRuns.gsf.push((await gsfRate(server, 'bench.cpu', iterations, 40_000)).rate);
      cpuRuns.pool.push(await baselineRate(pool, 'cpu', iterations, 40_000));
      cpuRuns.single.push(singleThreadRate(iterations, 20_000));
    }
    const rows: BenchRow[] = [];
    const json: Record<string, unknown> = { threads: THREADS, rounds: ROUNDS, in_flight: IN_FLIGHT };
    if (modes.has('trivial')) {
      const noop = median(noopRuns.gsf);
      const noopBase = median(noopRuns.pool);
      rows.push(
        { label: `gsf, trivial handler, ${TAGS} tags, ${THREADS} workers`, value: noop, unit: 'events/s' },
        { label: `baseline: one piscina task per event (${THREADS} threads, ${IN_FLIGHT} in flight)`, value: noopBase, unit: 'events/s' },
        { label: 'ratio', value: noop / noopBase, unit: 'x' },
      );
      json.trivial = { gsf_events_per_sec: Math.round(noop), baseline_events_per_sec: Math.round(noopBase), ratio: +(noop / noopBase).toFixed(2) };
      if (noopRuns.mainNs.length > 0) {
        const mainNs = median(noopRuns.mainNs);
        rows.push(
          { label: 'gsf, the main thread\'s CPU per trivial invoke', value: mainNs, unit: 'ns' },
          { label: 'gsf, what the main thread alone could push (1e9 / that)', value: 1e9 / mainNs, unit: 'events/s' },
        );
        Object.assign(json.trivial as object, { main_thread_ns_per_event: Math.round(mainNs), main_thread_ceiling_events_per_sec: Math.round(1e9 / mainNs) });
      }
    }
    if (modes.has('chained')) {
      const chained = median(chainRuns);
      rows.push({ label: `gsf, chained from the event threads, ${TAGS} tags × ${CHAIN_LENGTH}`, value: chained, unit: 'events/s' });
      json.chained = { gsf_events_per_sec: Math.round(chained), tags: TAGS, chain_length: CHAIN_LENGTH };
    }
    if (modes.has('cpu')) {
      const cpu = median(cpuRuns.gsf);
      const cpuPool = median(cpuRuns.pool);
      const single = median(cpuRuns.single);
      rows.push(
        { label: 'gsf, ~50 µs CPU-bound handler', value: cpu, unit: 'events/s' },
        { label: `baseline: one piscina task per event (${THREADS} threads)`, value: cpuPool, unit: 'events/s' },
        { label: 'ratio', value: cpu / cpuPool, unit: 'x' },
        { label: 'baseline: single-thread in-process executor', value: single, unit: 'events/s' },
        { label: 'ratio', value: cpu / single, unit: 'x' },
      );
      json.cpu_bound = {
        gsf_events_per_sec: Math.round(cpu),
        baseline_piscina_events_per_sec: Math.round(cpuPool), ratio_vs_piscina: +(cpu / cpuPool).toFixed(2),
        baseline_single_thread_events_per_sec: Math.round(single), ratio_vs_single_thread: +(cpu / single).toFixed(2),
      };
    }
    printReport('events', rows, json);
  } finally {
    await pool.destroy();
    await server.stop();
  }
}
