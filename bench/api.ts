/**
 * bench/api: GETs of counters on the API service, against raw uWebSockets.js routes returning
 * the same JSON in the same process and run: one counter whose value stays the same, and one
 * whose value changes on every read (so no cached answer applies). Only `200` answers count.
 * And the profiler's cost on the events benchmark (profiler on vs off).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import uWS from 'uWebSockets.js';
import { native } from '../src/native.ts';
import { startServer, type GsfServer } from '../src/index.ts';
import { httpLoad } from './http-load.ts';
import { printReport } from './report.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const LOAD = { connections: 16, depth: 16, durationMs: 2000 };
const TAGS = 10_000;
const PROFILER_ROUNDS = 9;
const EVENTS_PER_RUN = 1_000_000;

async function eventsRate(server: GsfServer, count: number): Promise<number> {
  const base = native.queueStats().completed_total;
  const start = performance.now();
  for (let i = 0; i < count; i += 5000) {
    for (let j = i; j < Math.min(count, i + 5000); j++) server.invoke('bench.noop', undefined, { tag: 10_000_000_000 + (j % TAGS) });
    await new Promise((r) => setImmediate(r));
  }
  while (native.queueStats().completed_total < base + count) await new Promise((r) => setTimeout(r, 1));
  return count / ((performance.now() - start) / 1000);
}

const CONSTANT_PATH = '/v1/counters/bench/requests/';
const CHANGING_PATH = '/v1/counters/bench/reads/';

/** The raw routes: the constant counter's JSON, and the changing counter's, built per request as gsf does. */
function rawServer(body: string): Promise<{ port: number; close(): void }> {
  let reads = 0;
  return new Promise((resolve, reject) => {
    const app = uWS.App().get(CONSTANT_PATH, (res) => {
      res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body));
    }).get(CHANGING_PATH, (res) => {
      const text = `{"category":"bench","counter":"reads","value":${++reads}}`;
      res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(text));
    });
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('raw uWS: cannot listen'));
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) });
    });
  });
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<void> {
  const server = await startServer({
    manifest: {
      components: [
        { name: 'EventDispatcher', arguments: { event_threads_size: 2, slow_event_log_threshold_in_ms: 600000 } },
        { name: 'ApiService', arguments: { api_service_port: 0 } },
        // Counter routes are served only when CounterService is listed.
        { name: 'CounterService', arguments: {} },
        { name: 'Logging', arguments: { minloglevel: 1 } },
      ],
      plugins: [path.join(here, 'plugins', 'bench')],
    },
    dir: here,
  });
  native.counterUpdate('bench', 'requests', 1, false, 'A counter the API benchmark reads');
  const body = JSON.stringify({ category: 'bench', counter: 'requests', value: 1 });
  const raw = await rawServer(body);
  try {
    // The answers must be what a client expects before anything is timed.
    for (const [port, path] of [[server.api.port, CONSTANT_PATH], [raw.port, CONSTANT_PATH], [server.api.port, CHANGING_PATH], [raw.port, CHANGING_PATH]] as const) {
      const first = await fetch(`http://127.0.0.1:${port}${path}`);
      const second = await fetch(`http://127.0.0.1:${port}${path}`);
      const [a, b] = [await first.json() as { value: number }, await second.json() as { value: number }];
      if (first.status !== 200 || second.status !== 200 || (path === CHANGING_PATH) !== (a.value !== b.value)) {
        throw new Error(`GET ${path} on port ${port}: ${first.status} ${JSON.stringify(a)}, then ${second.status} ${JSON.stringify(b)}`);
      }
    }
    for (const path of [CONSTANT_PATH, CHANGING_PATH]) {
      await httpLoad({ port: server.api.port, path, ...LOAD, durationMs: 500 });
      await httpLoad({ port: raw.port, path, ...LOAD, durationMs: 500 });
    }
    // Interleaved rounds, medians: a busy moment of the machine hits both sides alike.
    const runs = { gsf: [[], []] as number[][], raw: [[], []] as number[][] };
    const non200 = { gsf: 0, raw: 0 };
    for (let i = 0; i < 3; i++) {
      for (const [k, path] of [CONSTANT_PATH, CHANGING_PATH].entries()) {
        const g = await httpLoad({ port: server.api.port, path, ...LOAD });
        const r = await httpLoad({ port: raw.port, path, ...LOAD });
        runs.gsf[k]!.push(g.okPerSec);
        runs.raw[k]!.push(r.okPerSec);
        non200.gsf += g.non200;
        non200.raw += r.non200;
      }
    }
    const [gsf, gsfChanging] = runs.gsf.map(median) as [number, number];
    const [baseline, baselineChanging] = runs.raw.map(median) as [number, number];

    await eventsRate(server, 50_000);
    // Rounds in ABBA order (on, off, off, on): a drift of the machine's speed during a round
    // hits both sides alike. The median of the per-round ratios resists single slow moments.
    const ratios: number[] = [];
    const ons: number[] = [];
    const offs: number[] = [];
    const rate = async (profiler: boolean): Promise<number> => {
      server.thread.flags.set('enable_event_profiler', profiler);
      return eventsRate(server, EVENTS_PER_RUN);
    };
    for (let i = 0; i < PROFILER_ROUNDS; i++) {
      const on1 = await rate(true);
      const off1 = await rate(false);
      const off2 = await rate(false);
      const on2 = await rate(true);
      const a = (on1 + on2) / 2;
      const b = (off1 + off2) / 2;
      ons.push(a);
      offs.push(b);
      ratios.push(a / b);
    }
    server.thread.flags.set('enable_event_profiler', false);
    const on = median(ons);
    const off = median(offs);
    const ratio = median(ratios);
    const cost = 1 - ratio;
    printReport('api', [
      { label: `gsf GET ${CONSTANT_PATH} (value unchanged; 200 answers)`, value: gsf, unit: 'req/s' },
      { label: 'baseline: raw uWebSockets.js route, same JSON', value: baseline, unit: 'req/s' },
      { label: 'ratio', value: gsf / baseline, unit: 'x' },
      { label: `gsf GET ${CHANGING_PATH} (a new value every read; 200 answers)`, value: gsfChanging, unit: 'req/s' },
      { label: 'baseline: raw uWebSockets.js route, JSON built per request', value: baselineChanging, unit: 'req/s' },
      { label: 'ratio', value: gsfChanging / baselineChanging, unit: 'x' },
      { label: 'answers other than 200 (gsf + baseline, must be 0)', value: non200.gsf + non200.raw, unit: 'answers' },
      { label: 'events/s, profiler on', value: on, unit: 'events/s' },
      { label: 'events/s, profiler off', value: off, unit: 'events/s' },
      { label: `profiler cost (median of ${PROFILER_ROUNDS} ABBA rounds, percent)`, value: cost * 100, unit: '%' },
    ], {
      counter_get: { gsf_req_per_sec: Math.round(gsf), baseline_req_per_sec: Math.round(baseline), ratio: +(gsf / baseline).toFixed(3) },
      changing_counter_get: {
        gsf_req_per_sec: Math.round(gsfChanging), baseline_req_per_sec: Math.round(baselineChanging), ratio: +(gsfChanging / baselineChanging).toFixed(3),
      },
      non_200_answers: non200,
      profiler: { on_events_per_sec: Math.round(on), off_events_per_sec: Math.round(off), median_round_ratio: +ratio.toFixed(3), cost_percent: +(cost * 100).toFixed(2) },
    });
  } finally {
    raw.close();
    await server.stop();
  }
}
