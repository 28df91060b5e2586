/**
 * bench/api: GET of one counter on the API service, against a raw uWebSockets.js route
 * returning the same JSON in the same process and run; and the profiler's cost on the events
 * benchmark (profiler on vs off).
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

function rawServer(body: string): Promise<{ port: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const app = uWS.App().get('/v1/counters/bench/requests/', (res) => {
      res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body));
    });
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('raw uWS: cannot listen'));
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) });
    });
  });
}

export async function run(): Promise<void> {
  const server = await startServer({
    manifest: {
      components: [
        { name: 'EventDispatcher', arguments: { event_threads_size: 2, slow_event_log_threshold_in_ms: 600000 } },
        { name: 'ApiService', arguments: { api_service_port: 0 } },
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
    const path = '/v1/counters/bench/requests/';
    await httpLoad({ port: server.api.port, path, ...LOAD, durationMs: 500 });
    await httpLoad({ port: raw.port, path, ...LOAD, durationMs: 500 });
    // Interleaved rounds, so a busy moment of the machine hits both sides alike.
    let gsf = 0;
    let baseline = 0;
    for (let i = 0; i < 3; i++) {
      gsf += (await httpLoad({ port: server.api.port, path, ...LOAD })) / 3;
      baseline += (await httpLoad({ port: raw.port, path, ...LOAD })) / 3;
    }

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
    const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const on = median(ons);
    const off = median(offs);
    const ratio = median(ratios);
    const cost = 1 - ratio;
    printReport('api', [
      { label: 'gsf GET /v1/counters/bench/requests/', value: gsf, unit: 'req/s' },
      { label: 'baseline: raw uWebSockets.js route, same JSON', value: baseline, unit: 'req/s' },
      { label: 'ratio', value: gsf / baseline, unit: 'x' },
      { label: 'events/s, profiler on', value: on, unit: 'events/s' },
      { label: 'events/s, profiler off', value: off, unit: 'events/s' },
      { label: `profiler cost (median of ${PROFILER_ROUNDS} ABBA rounds, percent)`, value: cost * 100, unit: '%' },
    ], {
      counter_get: { gsf_req_per_sec: Math.round(gsf), baseline_req_per_sec: Math.round(baseline), ratio: +(gsf / baseline).toFixed(3) },
      profiler: { on_events_per_sec: Math.round(on), off_events_per_sec: Math.round(off), median_round_ratio: +ratio.toFixed(3), cost_percent: +(cost * 100).toFixed(2) },
    });
  } finally {
    raw.close();
    await server.stop();
  }
}
