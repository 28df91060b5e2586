/**
 * bench/objects: events that move coins between two random accounts out of 10,000 (two
 * objects written per event), committed by the writer in group transactions, against one
 * database transaction per event run inline on one thread, on the same database settings:
 * - SQLite (WAL, synchronous=FULL, gsf's default) and PostgreSQL (a throwaway cluster);
 * - through events (each worker awaits its event's commit before its next event) and with
 *   many commits in flight (transactions of their own from one event, as events that wait);
 * - a conflict run: 10% of events touch one hot account; every event completes and the coin
 *   total never changes; its reruns per event;
 * - concurrent writers of one object: 50, 200 and 400 gifts to one account at once, their
 *   reruns (each event should rerun about once, not once per event ahead of it) and time;
 * - a cached fetch inside a handler, awaited (`fetch`) and without waiting (`fetchCached`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { native } from '../src/native.ts';
import { startServer, type GsfServer } from '../src/index.ts';
import { transact } from '../src/objects/plugin-api.ts';
import { encodeFields, decodeFields } from '../src/objects/model.ts';
import { startPostgres } from '../test/integration/_postgres.ts';
import { printReport, type BenchRow } from './report.ts';
import type { Transfer } from './plugins/objects-bench/index.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ACCOUNTS = 10_000;
const THREADS = 4;
const START_COINS = 1000;

/** Deterministic pseudo-random numbers, so every run moves the same coins. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

function transfers(count: number, seed: number, hot?: string): Transfer[] {
  const r = rng(seed);
  const out: Transfer[] = [];
  for (let i = 0; i < count; i++) {
    const from = `a${Math.floor(r() * ACCOUNTS)}`;
    let to = hot !== undefined && r() < 0.1 ? hot : `a${Math.floor(r() * ACCOUNTS)}`;
    if (to === from) to = `a${(Number(from.slice(1)) + 1) % ACCOUNTS}`;
    out.push({ from, to, amount: 1 + Math.floor(r() * 5) });
  }
  return out;
}

async function idle(): Promise<void> {
  for (;;) {
    const q = native.queueStats();
    if (q.waiting === 0 && q.outstanding === 0) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function gsfServer(dir: string, databaseUrl: string): Promise<GsfServer> {
  const server = await startServer({
    manifest: {
      components: [
        { name: 'EventDispatcher', arguments: { event_threads_size: THREADS, slow_event_log_threshold_in_ms: 60000 } },
        { name: 'ApiService', arguments: { api_service_port: 0 } },
        { name: 'Logging', arguments: { minloglevel: 1 } },
        { name: 'ObjectStore', arguments: { database_url: databaseUrl, max_event_reruns: 50 } },
      ],
      plugins: [path.join(here, 'plugins', 'objects-bench')],
    },
    dir,
  });
  await transact((tx) => {
    for (let i = 0; i < ACCOUNTS; i++) tx.create('BenchAccount', { name: `a${i}`, coins: START_COINS }, { id: `a${i}` });
  });
  return server;
}

/** Committed transfer events per second through the event system. */
async function eventRate(server: GsfServer, list: Transfer[]): Promise<number> {
  const start = performance.now();
  for (const t of list) server.invoke('bench.transfer', t);
  await idle();
  return list.length / ((performance.now() - start) / 1000);
}

/**
 * Transfers per second with many commits in flight: events of `per` transactions each, one
 * such event per event thread at a time (as a game would run batch jobs), so `per` × threads
 * transactions are in flight. Unbounded, every transaction of the run would race every other
 * for the same accounts: that measures conflicts, not commits.
 */
async function pipelineRate(server: GsfServer, list: Transfer[], per: number): Promise<number> {
  const before = native.counterValue('bench_objects', 'transfers_done') ?? 0;
  const completed = (): number => native.queueStats().completed_total + native.queueStats().cancelled_total;
  const base = completed();
  const start = performance.now();
  let invoked = 0;
  for (let i = 0; i < list.length; i += per) {
    while (invoked - (completed() - base) >= THREADS) await new Promise((r) => setTimeout(r, 1));
    server.invoke('bench.transfers', { transfers: list.slice(i, i + per) });
    invoked++;
  }
  await idle();
  const done = (native.counterValue('bench_objects', 'transfers_done') ?? 0) - before;
  if (done !== list.length) throw new Error(`pipeline run finished ${done} of ${list.length} transfers`);
  return list.length / ((performance.now() - start) / 1000);
}

async function totalCoins(): Promise<number> {
  native.objCacheClear();
  return transact(async (tx) => {
    let sum = 0;
    for (let i = 0; i < ACCOUNTS; i++) sum += (await tx.fetch('BenchAccount', `a${i}`))!.get('coins');
    return sum;
  });
}

/** The same work as one better-sqlite3 transaction per event, inline on this thread. */
function sqliteBaseline(file: string, list: Transfer[]): number {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE acc (id TEXT PRIMARY KEY, version INTEGER NOT NULL, data BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO acc VALUES (?, 1, ?)');
  db.transaction(() => {
    for (let i = 0; i < ACCOUNTS; i++) insert.run(`a${i}`, encodeFields({ name: `a${i}`, coins: START_COINS }));
  })();
  const get = db.prepare<[string], { version: number; data: Buffer }>('SELECT version, data FROM acc WHERE id = ?');
  const put = db.prepare('UPDATE acc SET version = ?, data = ? WHERE id = ?');
  const move = db.transaction((t: Transfer) => {
    const a = get.get(t.from)!;
    const b = get.get(t.to)!;
    const fa = decodeFields(a.data);
    const fb = decodeFields(b.data);
    if ((fa.coins as number) < t.amount) return;
    fa.coins = (fa.coins as number) - t.amount;
    fb.coins = (fb.coins as number) + t.amount;
    put.run(a.version + 1, encodeFields(fa), t.from);
    put.run(b.version + 1, encodeFields(fb), t.to);
  });
  const start = performance.now();
  for (const t of list) move(t);
  const rate = list.length / ((performance.now() - start) / 1000);
  db.close();
  return rate;
}

/** The same work as one `pg` transaction per event, one after another on one connection. */
async function postgresBaseline(url: string, list: Transfer[]): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE TABLE acc (id TEXT PRIMARY KEY, version BIGINT NOT NULL, data BYTEA NOT NULL)');
  const ids = Array.from({ length: ACCOUNTS }, (_, i) => `a${i}`);
  const datas = ids.map((id) => Buffer.from(encodeFields({ name: id, coins: START_COINS })));
  await client.query('INSERT INTO acc SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[])', [ids, ids.map(() => 1), datas]);
  const start = performance.now();
  for (const t of list) {
    await client.query('BEGIN');
    const rows = await client.query<{ id: string; version: string; data: Buffer }>('SELECT id, version, data FROM acc WHERE id = ANY($1) ORDER BY id FOR UPDATE', [[t.from, t.to]]);
    const a = rows.rows.find((r) => r.id === t.from)!;
    const b = rows.rows.find((r) => r.id === t.to)!;
    const fa = decodeFields(a.data);
    const fb = decodeFields(b.data);
    if ((fa.coins as number) >= t.amount) {
      fa.coins = (fa.coins as number) - t.amount;
      fb.coins = (fb.coins as number) + t.amount;
      await client.query('UPDATE acc SET version = $1, data = $2 WHERE id = $3', [Number(a.version) + 1, encodeFields(fa), t.from]);
      await client.query('UPDATE acc SET version = $1, data = $2 WHERE id = $3', [Number(b.version) + 1, encodeFields(fb), t.to]);
    }
    await client.query('COMMIT');
  }
  const rate = list.length / ((performance.now() - start) / 1000);
  await client.end();
  return rate;
}

/** One run of concurrent writers of one object. */
interface HotRun {
  writers: number;
  reruns: number;
  ms: number;
  exact: boolean;
}

const HOT_WRITERS = [50, 200, 400];

/** `writers` gifts of 1 coin to one account at once: their reruns and time; the coins must all arrive. */
async function hotRun(server: GsfServer, writers: number): Promise<HotRun> {
  const id = 'a1';
  const coins = async (): Promise<number> => transact(async (tx) => (await tx.fetch('BenchAccount', id))!.get('coins'));
  const before = await coins();
  const reruns = native.counterValue('object', 'event_reruns') ?? 0;
  const start = performance.now();
  for (let i = 0; i < writers; i++) server.invoke('bench.gift', { id, amount: 1 });
  await idle();
  const ms = performance.now() - start;
  return { writers, reruns: (native.counterValue('object', 'event_reruns') ?? 0) - reruns, ms, exact: (await coins()) === before + writers };
}

interface BackendFigures {
  events: number;
  pipeline: number;
  baseline: number;
  conflict: number;
  conflictTotalKept: boolean;
  reruns: number;
  conflictEvents: number;
  hot: HotRun[];
}

async function measure(backend: 'sqlite' | 'postgresql', dir: string, url: string, baseline: () => Promise<number> | number,
  sizes: { events: number; pipeline: number; conflict: number }): Promise<BackendFigures & { fetchUs: number; fetchNowUs: number }> {
  const server = await gsfServer(dir, url);
  try {
    // Warm-up: every account into the cache, the workers' code paths compiled.
    await eventRate(server, transfers(2000, 1));
    for (let w = 0; w < THREADS; w++) {
      for (const loop of ['bench.fetch_loop', 'bench.fetch_now_loop']) server.invoke(loop, { ids: Array.from({ length: ACCOUNTS }, (_, i) => `a${i}`) });
    }
    await idle();
    const fetches: number[] = [];
    const fetchesNow: number[] = [];
    const ids = Array.from({ length: ACCOUNTS }, (_, k) => `a${k}`);
    for (let i = 0; i < 5; i++) {
      server.invoke('bench.fetch_loop', { ids });
      await idle();
      fetches.push(native.counterValue('bench_objects', 'fetch_us') ?? NaN);
      server.invoke('bench.fetch_now_loop', { ids });
      await idle();
      fetchesNow.push(native.counterValue('bench_objects', 'fetch_now_us') ?? NaN);
    }
    const fetchUs = [...fetches].sort((a, b) => a - b)[2]!;
    const fetchNowUs = [...fetchesNow].sort((a, b) => a - b)[2]!;
    const before = server.dispatcher.totals.failed;
    const events = await eventRate(server, transfers(sizes.events, 2));
    // A failed event would count as a fast one: the figure is of committed events only.
    if (server.dispatcher.totals.failed !== before) throw new Error(`${backend}: ${server.dispatcher.totals.failed - before} transfer events failed`);
    const pipeline = await pipelineRate(server, transfers(sizes.pipeline, 3), 64);
    const base = await baseline();
    const reruns = native.counterValue('object', 'event_reruns') ?? 0;
    const failed = server.dispatcher.totals.failed;
    const conflict = await eventRate(server, transfers(sizes.conflict, 4, 'a0'));
    if (server.dispatcher.totals.failed !== failed) throw new Error(`${backend}: ${server.dispatcher.totals.failed - failed} conflict-run events failed`);
    // Commits of events that timed out may still be on their way to the database.
    while ((native.counterValue('object', 'outstanding_update_query') ?? 0) > 0) await new Promise((r) => setTimeout(r, 10));
    const total = await totalCoins();
    if (total !== ACCOUNTS * START_COINS) console.error(`${backend}: the coin total is ${total}, not ${ACCOUNTS * START_COINS}`);
    const conflictReruns = (native.counterValue('object', 'event_reruns') ?? 0) - reruns;
    const hot: HotRun[] = [];
    for (const writers of HOT_WRITERS) hot.push(await hotRun(server, writers));
    return {
      events, pipeline, baseline: base, conflict, conflictTotalKept: total === ACCOUNTS * START_COINS,
      reruns: conflictReruns, conflictEvents: sizes.conflict, hot, fetchUs, fetchNowUs,
    };
  } finally {
    await server.stop();
  }
}

/** `GSF_BENCH_BACKENDS=sqlite` (or `postgresql`) runs one backend only. */
const BACKENDS = (process.env.GSF_BENCH_BACKENDS ?? 'sqlite,postgresql').split(',');

export async function run(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-objects-'));
  const cluster = BACKENDS.includes('postgresql') ? await startPostgres() : null;
  try {
    const measured: Array<[string, BackendFigures & { fetchUs: number; fetchNowUs: number }]> = [];
    if (BACKENDS.includes('sqlite')) {
      measured.push(['SQLite', await measure('sqlite', path.join(dir, 'gsf'), '', () => sqliteBaseline(path.join(dir, 'baseline.sqlite'), transfers(3000, 5)),
        { events: 20_000, pipeline: 60_000, conflict: 20_000 })]);
    }
    if (cluster !== null) {
      const pgUrl = await cluster.database('gsf_bench');
      const baseUrl = await cluster.database('gsf_baseline');
      measured.push(['PostgreSQL', await measure('postgresql', path.join(dir, 'pg'), pgUrl, () => postgresBaseline(baseUrl, transfers(2000, 5)),
        { events: 5_000, pipeline: 20_000, conflict: 5_000 })]);
    }
    const rows: BenchRow[] = [];
    const figures: Record<string, unknown> = { threads: THREADS, accounts: ACCOUNTS };
    for (const [name, f] of measured) {
      rows.push(
        { label: `${name}: gsf, many commits in flight (64 per event)`, value: f.pipeline, unit: 'events/s' },
        { label: `${name}: gsf, through events (${THREADS} event threads)`, value: f.events, unit: 'events/s' },
        { label: `${name}: baseline, one transaction per event, inline`, value: f.baseline, unit: 'events/s' },
        { label: `${name}: ratio, many in flight`, value: f.pipeline / f.baseline, unit: 'x' },
        { label: `${name}: ratio, through events`, value: f.events / f.baseline, unit: 'x' },
        { label: `${name}: conflict run (10% on one account)`, value: f.conflict, unit: 'events/s' },
        { label: `${name}: conflict run, reruns per event`, value: f.reruns / f.conflictEvents, unit: 'reruns/event' },
        ...f.hot.flatMap((h) => [
          { label: `${name}: ${h.writers} concurrent writers of one object, reruns`, value: h.reruns, unit: 'reruns' },
          { label: `${name}: ${h.writers} concurrent writers of one object, time`, value: h.ms, unit: 'ms' },
        ]),
        { label: `${name}: cached fetch inside a handler (await fetch)`, value: f.fetchUs, unit: 'µs/msg' },
        { label: `${name}: cached fetch inside a handler (fetchCached, no wait)`, value: f.fetchNowUs, unit: 'µs/msg' },
      );
      figures[name.toLowerCase()] = {
        gsf_in_flight_events_per_sec: Math.round(f.pipeline),
        gsf_events_per_sec: Math.round(f.events),
        baseline_events_per_sec: Math.round(f.baseline),
        ratio_in_flight: +(f.pipeline / f.baseline).toFixed(2),
        ratio_events: +(f.events / f.baseline).toFixed(2),
        conflict_run_events_per_sec: Math.round(f.conflict),
        conflict_run_reruns: f.reruns,
        conflict_run_reruns_per_event: +(f.reruns / f.conflictEvents).toFixed(4),
        hot_object: Object.fromEntries(f.hot.map((h) => [`writers_${h.writers}`,
          { reruns: h.reruns, reruns_per_event: +(h.reruns / h.writers).toFixed(2), ms: Math.round(h.ms), exact: h.exact }])),
        conflict_run_total_kept: f.conflictTotalKept,
        cached_fetch_us: +f.fetchUs.toFixed(3),
        cached_fetch_now_us: +f.fetchNowUs.toFixed(3),
      };
    }
    printReport('objects', rows, figures);
  } finally {
    await cluster?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
