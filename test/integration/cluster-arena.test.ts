/**
 * The example game on three `gsf start` processes, one real Redis and one real PostgreSQL:
 * players chat across servers, a login on one server replaces the player's session on another,
 * scores stay consistent (a commit on one server drops the others' cached copies), a
 * maintenance change made on one server reaches every server (and one started later), and
 * PostgreSQL going away fails commits with an error frame until it is back.
 */
import { testWithPostgres as test } from './_redis-test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Unpackr } from 'msgpackr';
import type { GsfClient } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { startPostgres, type TestPostgres } from './_postgres.ts';
import { collect, startGsf, startRedis, type ComponentList, type GsfProcess, type TestRedis } from './_cluster.ts';

const ARENA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'arena');

let redis: TestRedis;
let postgres: TestPostgres;
let database: string;
let components: ComponentList;
const servers: GsfProcess[] = [];
let a: GsfProcess, b: GsfProcess, c: GsfProcess;

test.before(async () => {
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  database = await postgres.database('arena_cluster');
  components = {
    // A TTL long enough that a live server stalled on a loaded machine is not taken for dead.
    Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 250, presence_ttl_in_ms: 5000 },
    // Six first hellos at once rewrite the one roster object from three servers: reruns, as in one process.
    ObjectStore: { database_url: database, max_event_reruns: 50 },
  };
  // One after another: the first creates the tables.
  for (let i = 0; i < 3; i++) servers.push(await startGsf(components, [ARENA]));
  [a, b, c] = servers as [GsfProcess, GsfProcess, GsfProcess];
  for (const s of servers) await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 3, 10000, 'three servers');
});

test.after.always(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

async function player(s: GsfProcess, name: string): Promise<GsfClient> {
  const client = await s.connect();
  await client.request('hello', { name });
  return client;
}

test.serial('players chat across servers', async (t) => {
  const ada = await player(a, 'ada');
  const adaHears = collect<{ room: string; from: string; text: string }>(ada, 'chat');
  const joined = collect<{ room: string; name: string }>(ada, 'joined');
  const grace = await player(b, 'grace');
  const graceHears = collect<{ room: string; from: string; text: string }>(grace, 'chat');
  await waitFor(() => joined.some((j) => j.name === 'grace'), 5000, "grace's arrival on A");
  t.deepEqual(await ada.request('say', { room: 'lobby', text: 'hi grace, I am on A' }), { room: 'lobby' });
  await waitFor(() => graceHears.length === 1, 5000, 'the chat line on B');
  t.deepEqual(graceHears, [{ room: 'lobby', from: 'ada', text: 'hi grace, I am on A' }]);
  t.deepEqual(await grace.request('say', { room: 'lobby', text: 'hi ada, B here' }), { room: 'lobby' });
  await waitFor(() => adaHears.length === 2, 5000, 'both lines on A');
  t.deepEqual(adaHears.map((l) => l.text), ['hi grace, I am on A', 'hi ada, B here']);

  // A room only two players joined, on two other servers: the third hears nothing.
  const linus = await player(c, 'linus');
  const linusHears = collect(linus, 'chat');
  t.deepEqual(await grace.request('join', { room: 'duel' }), { room: 'duel' });
  t.deepEqual(await ada.request('join', { room: 'duel' }), { room: 'duel' });
  await waitFor(async () => {
    // Joins reach Redis right after their replies; the first publish after both is heard by both.
    const r = await redisMembers('duel');
    return r.length === 2;
  }, 5000, 'the duel room on two servers');
  await linus.request('say', { room: 'duel', text: 'linus is not in the duel' });
  // A publish reaches Redis just after its reply: lines from two servers keep no order between
  // them, so grace speaks once linus's line is in.
  await waitFor(() => adaHears.some((l) => l.room === 'duel'), 5000, "linus's line on A");
  t.deepEqual(await grace.request('say', { room: 'duel', text: 'go!' }), { room: 'duel' });
  await waitFor(() => adaHears.filter((l) => l.room === 'duel').length === 2, 5000, 'the duel lines on A');
  t.deepEqual(adaHears.filter((l) => l.room === 'duel'), [{ room: 'duel', from: 'linus', text: 'linus is not in the duel' }, { room: 'duel', from: 'grace', text: 'go!' }]);
  t.deepEqual(linusHears, []);
  await Promise.all([ada, grace, linus].map((x) => x.close()));
});

async function redisMembers(group: string): Promise<string[]> {
  const { Redis } = await import('ioredis');
  const r = new Redis(redis.url);
  try {
    return await r.smembers(`gsf:grp:${group}`);
  } finally {
    r.disconnect();
  }
}

test.serial("a login on one server replaces the player's session on another, and scores stay consistent across servers", async (t) => {
  // B reads mary's player and keeps it in its cache.
  const onB = await player(b, 'mary');
  t.deepEqual(await onB.request('profile'), { name: 'mary', score: 0, character: { nickname: 'mary', level: 1 }, inventory: {} });
  const onA = await player(a, 'mary');
  t.deepEqual(await onB.closed, { code: 4009, reason: "account 'mary' logged in from another session" });
  for (let i = 1; i <= 4; i++) t.like(await onA.request('click'), { score: i });
  // Back on B: its cached copy of mary is gone, so it reads her score from PostgreSQL.
  const again = await player(b, 'mary');
  t.deepEqual(await onA.closed, { code: 4009, reason: "account 'mary' logged in from another session" });
  t.like(await again.request('profile'), { name: 'mary', score: 4 });
  t.like(await again.request('click'), { score: 5 });
  t.true((await b.json<{ value: number }>('/v1/counters/coordination_stat/object_invalidations_applied/')).body.value >= 1);
  await again.close();
});

test.serial('first hellos on three servers at once all land on the one roster (conflicts rerun)', async (t) => {
  const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
  const clients = await Promise.all(names.map((n, i) => servers[i % 3]!.connect()));
  const replies = await Promise.all(clients.map((cl, i) => cl.request('hello', { name: names[i] })));
  t.deepEqual(replies, names.map((name) => ({ name, room: 'lobby' })));
  const db = new pg.Client({ connectionString: database });
  await db.connect();
  try {
    const row = await db.query<{ data: Buffer }>('SELECT data FROM "obj_ArenaRoster" WHERE id = $1', ['roster']);
    const roster = new Unpackr({ useRecords: false }).unpack(row.rows[0]!.data) as { names: string[] };
    for (const n of names) t.true(roster.names.includes(n), n);
    t.is(new Set(roster.names).size, roster.names.length, 'no name twice');
  } finally {
    await db.end();
  }
  await Promise.all(clients.map((cl) => cl.close()));
});

test.serial('a maintenance change on one server reaches every server, and a server started later', async (t) => {
  const clients = await Promise.all([a, b, c].map((s, i) => player(s, `m${i}`)));
  const notices = clients.map((cl) => collect<{ under_maintenance: boolean; messages: string }>(cl, '_maintenance'));
  const ends = clients.map((cl) => collect(cl, '_maintenance_end'));
  const record = { date_start: '2030/01/01 00:00', date_end: '2030/01/01 02:00', messages: 'back soon' };
  const on = await a.json<{ under_maintenance: boolean; cluster: { applied: string[]; failed: Record<string, string> } }>(
    '/v1/maintenance/update?cluster=true', { method: 'PUT', body: JSON.stringify({ ...record, under_maintenance: true }) });
  t.is(on.status, 200);
  t.true(on.body.under_maintenance);
  t.deepEqual(on.body.cluster, { applied: [a.serverId, b.serverId, c.serverId].sort(), failed: {} });
  await waitFor(() => notices.every((n) => n.length === 1), 5000, 'the notice on every server');
  for (const n of notices) t.like(n[0], { under_maintenance: true, messages: 'back soon' });
  for (const s of [b, c]) t.like((await s.json('/v1/maintenance')).body, { under_maintenance: true, messages: 'back soon' });
  // Without cluster=true a change stays on its server.
  t.like((await c.json('/v1/maintenance/update', { method: 'PUT', body: JSON.stringify({ ...record, messages: 'only C' }) })).body, { messages: 'only C' });
  t.like((await b.json('/v1/maintenance')).body, { messages: 'back soon' });

  // A server that starts now takes the cluster's state: its clients are told at once.
  const d = await startGsf(components, [ARENA]);
  servers.push(d);
  const late = await d.connect();
  t.like(await waitFor(() => late.maintenance, 5000, 'the notice on connect'), { under_maintenance: true, messages: 'back soon' });
  await waitFor(async () => (await b.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 4, 5000, 'B to see four servers');

  const lateEnd = collect(late, '_maintenance_end');
  const off = await b.json<{ under_maintenance: boolean; cluster: { applied: string[] } }>('/v1/maintenance/update?cluster=true',
    { method: 'PUT', body: JSON.stringify({ ...record, under_maintenance: false }) });
  t.false(off.body.under_maintenance);
  t.deepEqual(off.body.cluster.applied, [a.serverId, b.serverId, c.serverId, d.serverId].sort());
  await waitFor(() => ends.every((e) => e.length === 1) && lateEnd.length === 1, 5000, 'the end on every server');
  t.deepEqual(await clients[1]!.request('join', { room: 'after' }), { room: 'after' });
  await Promise.all([...clients, late].map((cl) => cl.close()));
});

test.serial('PostgreSQL going away fails commits with an error frame and a log line; once it is back they succeed', async (t) => {
  const zoe = await player(b, 'zoe');
  const kim = await player(a, 'kim');
  const kimHears = collect<{ text: string }>(kim, 'chat');
  t.like(await zoe.request('click'), { score: 1 });
  postgres.pause();
  try {
    const failed = await zoe.request('click').then(() => null, (err: { code: string; message: string }) => err);
    t.like(failed, { code: 'GSF_ERR_MESSAGE_HANDLER_FAILED', message: "the handler of 'click' failed" });
    t.true(b.logs().some((l) => l.includes('GSF_ERR_OBJECT_STORE') && l.includes('commit failed')), 'the commit failure is logged');
    // What does not need the database goes on, across servers too.
    t.deepEqual(await zoe.request('say', { room: 'lobby', text: 'db down, chat up' }), { room: 'lobby' });
    await waitFor(() => kimHears.some((l) => l.text === 'db down, chat up'), 5000, 'the chat line');
  } finally {
    postgres.resume();
  }
  t.like(await zoe.request('click'), { score: 2 });
  t.like(await zoe.request('profile'), { name: 'zoe', score: 2 });
  await Promise.all([zoe.close(), kim.close()]);
});

test('a cluster with object types needs PostgreSQL: the start says so, before it makes a SQLite file', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cluster-'));
  const err = await startGsf({ Cluster: { redis_url: redis.url } }, [ARENA], dir).catch((e: Error) => e.message);
  t.regex(String(err), /Cluster needs ObjectStore\.database_url \(PostgreSQL\) when object types are declared/);
  t.false(fs.existsSync(path.join(dir, 'data', 'gsf.sqlite')), 'the refused start made a SQLite database');
});
