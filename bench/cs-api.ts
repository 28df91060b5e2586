/**
 * bench/cs-api: `GET /cs-api/v1/account/{id}/` of the operations console, served by the arena's
 * managed handler and by its native (C) handler, against a raw uWebSockets.js route returning
 * the same JSON, in interleaved rounds of one run. Each gsf server runs as `gsf start` in a
 * process of its own (one with `deploy_api_service_use_managed` true, one with false), with the
 * account stored in its objects; every request runs as an event, reads the account from the
 * object cache and writes its audit line to the server's log file. Only `200` answers count.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import uWS from 'uWebSockets.js';
import { GsfClient } from '../src/sdk/index.ts';
import { httpLoad } from './http-load.ts';
import { profileArgs, stopProcess } from './processes.ts';
import { printReport } from './report.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUTE = '/cs-api/v1/account/{id}/';
/** Accounts read in turn: a console request runs on its account's tag, so one account's reads take turns. */
const ACCOUNTS = Array.from({ length: 128 }, (_, i) => `player${i}`);
const PATHS = ACCOUNTS.map((a) => `/cs-api/v1/account/${a}/`);
/**
 * Requests in flight: one per connection, because uWebSockets.js does not answer pipelined
 * requests whose answer comes later (its issues #277 and #1301); the raw route gets the same load.
 */
const LOAD = { connections: 256, depth: 1, durationMs: 1000, paths: PATHS, path: PATHS[0]! };
/**
 * Rounds per gsf side. The sides take turns with a raw round between any two gsf rounds
 * (raw, managed, raw, native, raw, managed, …), and each gsf round's ratio is to the mean of
 * the raw rounds just before and just after it; a side's ratio is the median of its rounds'.
 * On a shared virtual machine the speed of the same code drifts by up to two times within a
 * minute, so only rounds a second apart compare the two servers on one machine.
 */
const ROUNDS = 9;
const EVENT_THREADS = 1;

interface Gsf {
  child: ChildProcess;
  api: number;
  dir: string;
}

/** Starts `gsf start` with the arena and both console halves; resolves with its ports once it listens. */
async function startGsf(managed: boolean): Promise<Gsf> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gsf-bench-cs-api-${managed ? 'managed' : 'native'}-`));
  const log = path.join(dir, 'server.log');
  fs.writeFileSync(path.join(dir, 'MANIFEST.json'), JSON.stringify({
    components: [
      { name: 'EventDispatcher', arguments: { event_threads_size: EVENT_THREADS, slow_event_log_threshold_in_ms: 600000 } },
      { name: 'ApiService', arguments: { api_service_port: 0 } },
      { name: 'DeployApiService', arguments: { deploy_api_service_use_managed: managed } },
      { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0 } },
      { name: 'Logging', arguments: { log_file: log } },
    ],
    plugins: [path.join(root, 'plugins', 'arena'), path.join(root, 'plugins', 'arena-console-native')],
  }));
  const child = spawn(process.execPath, [...profileArgs(), path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', path.join(dir, 'MANIFEST.json')],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const started = Date.now();
  for (;;) {
    const m = fs.existsSync(log) ? /listening api=[\d.]+:(\d+) websocket=[\d.]+:(\d+)/.exec(fs.readFileSync(log, 'utf8')) : null;
    if (m) {
      // The accounts the route reads: a hello stores each.
      const c = await GsfClient.connect({ url: `ws://127.0.0.1:${m[2]}`, version: '1.0.0', codec: 'json' });
      for (const name of ACCOUNTS) await c.request('hello', { name });
      await c.close();
      return { child, api: Number(m[1]), dir };
    }
    if (child.exitCode !== null || Date.now() - started > 60000) throw new Error(`gsf (${managed ? 'managed' : 'native'}) did not start; see ${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The raw route: each account's JSON, looked up by path as gsf looks the account up in its cache. */
function rawServer(bodies: Map<string, string>): Promise<{ port: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const app = uWS.App().get('/cs-api/v1/account/:id/', (res, req) => {
      const body = bodies.get(req.getUrl());
      res.cork(() => {
        if (body === undefined) res.writeStatus('404 Not Found').end();
        else res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
      });
    });
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('raw uWS: cannot listen'));
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) });
    });
  });
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

async function get(port: number, url: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${port}${url}`);
  return { status: r.status, text: await r.text() };
}

export async function run(): Promise<void> {
  const managed = await startGsf(true);
  const native = await startGsf(false);
  let raw: { port: number; close(): void } | null = null;
  try {
    // Both handlers answer every account; the raw route answers the managed server's JSON.
    const bodies = new Map<string, string>();
    for (const [i, url] of PATHS.entries()) {
      const [a, b] = [await get(managed.api, url), await get(native.api, url)];
      for (const [side, r] of [['managed', a], ['native', b]] as const) {
        const body = JSON.parse(r.text) as Record<string, unknown>;
        if (r.status !== 200 || body.account_id !== ACCOUNTS[i] || body.score !== 0) throw new Error(`${side}: GET ${url} answered ${r.status} ${r.text}`);
      }
      if (a.text.length !== b.text.length) throw new Error(`the two answers differ in length: ${a.text} / ${b.text}`);
      bodies.set(url, a.text);
    }
    raw = await rawServer(bodies);
    for (const url of PATHS) {
      const check = await get(raw.port, url);
      if (check.status !== 200 || check.text !== bodies.get(url)) throw new Error('the raw route does not answer the same JSON');
    }

    const sides = { managed: managed.api, raw: raw.port, native: native.api };
    for (const port of Object.values(sides)) await httpLoad({ port, ...LOAD, durationMs: 500 });
    const runs: Record<keyof typeof sides, number[]> = { managed: [], raw: [], native: [] };
    const ratios: Record<'managed' | 'native', number[]> = { managed: [], native: [] };
    let non200 = 0;
    const round = async (side: keyof typeof sides): Promise<number> => {
      const r = await httpLoad({ port: sides[side], ...LOAD });
      runs[side].push(r.okPerSec);
      non200 += r.non200;
      return r.okPerSec;
    };
    let rawBefore = await round('raw');
    for (let i = 0; i < ROUNDS; i++) {
      for (const side of ['managed', 'native'] as const) {
        const v = await round(side);
        const rawAfter = await round('raw');
        ratios[side].push(v / ((rawBefore + rawAfter) / 2));
        rawBefore = rawAfter;
      }
    }
    const m = median(runs.managed), n = median(runs.native), base = median(runs.raw);
    const mRatio = median(ratios.managed), nRatio = median(ratios.native);
    const audit = fs.readFileSync(path.join(managed.dir, 'server.log'), 'utf8').split('\n').filter((l) => l.includes('cs-api audit: method=GET')).length;
    printReport('cs-api', [
      { label: `gsf managed handler GET ${ROUTE} (${ACCOUNTS.length} accounts; 200 answers)`, value: m, unit: 'req/s' },
      { label: `gsf native (C) handler GET ${ROUTE} (${ACCOUNTS.length} accounts; 200 answers)`, value: n, unit: 'req/s' },
      { label: 'baseline: raw uWebSockets.js route, same JSON', value: base, unit: 'req/s' },
      { label: 'ratio managed / raw (median of the rounds\' ratios)', value: mRatio, unit: 'x' },
      { label: 'ratio native / raw (median of the rounds\' ratios)', value: nRatio, unit: 'x' },
      { label: 'answers other than 200 (all sides, must be 0)', value: non200, unit: 'answers' },
      { label: 'audit lines the managed server wrote', value: audit, unit: 'lines' },
    ], {
      route: ROUTE,
      accounts: ACCOUNTS.length,
      connections: LOAD.connections,
      event_threads: EVENT_THREADS,
      managed: { req_per_sec: Math.round(m), ratio: +mRatio.toFixed(3), round_ratios: ratios.managed.map((r) => +r.toFixed(3)), rounds: runs.managed.map(Math.round) },
      native: { req_per_sec: Math.round(n), ratio: +nRatio.toFixed(3), round_ratios: ratios.native.map((r) => +r.toFixed(3)), rounds: runs.native.map(Math.round) },
      baseline: { req_per_sec: Math.round(base), rounds: runs.raw.map(Math.round) },
      non_200_answers: non200,
    });
  } finally {
    raw?.close();
    await Promise.all([stopProcess(managed.child), stopProcess(native.child)]);
    for (const dir of [managed.dir, native.dir]) fs.rmSync(dir, { recursive: true, force: true });
  }
}
