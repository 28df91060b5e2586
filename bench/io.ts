/**
 * bench/io: events whose handlers wait on I/O. Each handler awaits a 20 ms timer (standing for
 * a database, authenticator or platform call); the events are spread over 10k tags. gsf runs
 * them with events that wait: an awaiting event keeps its tag and frees its worker. The
 * baseline, in the same run, is the same server and handlers with one awaiting event per
 * worker at a time (`max_awaiting_events_per_thread: 1`), which is how a worker that waits out
 * every async handler before the next event of any tag behaves. (That synchronous events lose
 * nothing is bench/events' to show, before and after.)
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { native } from '../src/native.ts';
import { startServer, type GsfServer } from '../src/index.ts';
import { printReport } from './report.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const THREADS = 2;
const TAGS = 10_000;
const WAIT_MS = 20;

async function server(maxAwaiting: number): Promise<GsfServer> {
  return startServer({
    manifest: {
      components: [
        { name: 'EventDispatcher', arguments: {
          event_threads_size: THREADS, max_awaiting_events_per_thread: maxAwaiting, slow_event_log_threshold_in_ms: 600000,
        } },
        { name: 'Logging', arguments: { minloglevel: 1 } },
      ],
      plugins: [path.join(here, 'plugins', 'bench')],
    },
    dir: here,
  });
}

/** Invokes events of `event` round-robin over TAGS tags for `ms`, then returns completed events/s. */
async function rate(s: GsfServer, event: string, payload: unknown, ms: number, backlog: number): Promise<number> {
  const tags = Array.from({ length: TAGS }, (_, i) => 30_000_000_000 + i);
  const base = native.queueStats().completed_total;
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    // Keep a bounded backlog queued, so the measure is the server's rate, not the queue's growth.
    const q = native.queueStats();
    for (let i = q.waiting; i < backlog; i++) s.invoke(event, payload, { tag: tags[n++ % TAGS] });
    await new Promise((r) => setTimeout(r, 1));
  }
  const done = native.queueStats().completed_total - base;
  const seconds = (performance.now() - start) / 1000;
  native.queueReset();
  while (native.queueStats().outstanding > 0) await new Promise((r) => setTimeout(r, 5));
  return done / seconds;
}

export async function run(): Promise<void> {
  const figures: Record<string, number[]> = { waitNew: [], waitOld: [] };
  for (let round = 0; round < 3; round++) {
    for (const [label, cap] of [['New', 1000], ['Old', 1]] as const) {
      const s = await server(cap);
      try {
        figures[`wait${label}`]!.push(await rate(s, 'bench.wait', WAIT_MS, 3000, 4000));
      } finally {
        await s.stop();
      }
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [wn, wo] = ['waitNew', 'waitOld'].map((k) => median(figures[k]!)) as [number, number];
  printReport('io', [
    { label: `handler awaiting ${WAIT_MS} ms, ${TAGS} tags, ${THREADS} threads: events that wait`, value: wn, unit: 'events/s' },
    { label: 'baseline: one awaiting event per worker at a time', value: wo, unit: 'events/s' },
    { label: 'ratio', value: wn / wo, unit: 'x' },
  ], {
    threads: THREADS, tags: TAGS, wait_ms: WAIT_MS, rounds: 3,
    awaiting: { events_per_sec: Math.round(wn), baseline_events_per_sec: Math.round(wo), ratio: +(wn / wo).toFixed(1) },
  });
}
