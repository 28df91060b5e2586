/**
 * Presence across servers on a real Redis: a login on one server replaces (or is refused by)
 * the session of the same account on another; a killed server's sessions and logins leave
 * presence within the TTL while the other servers carry on; a graceful stop leaves nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from './_redis-test.ts';
import { waitFor } from './_server.ts';
import { collect, redisCli, startGsf, startRedis, type ComponentList, type GsfProcess, type TestRedis } from './_cluster.ts';

const PLUGINS = ['session-probe', 'cluster-probe'];
// Long enough that a live server stalled on a loaded machine is not taken for dead.
const TTL = 5000;

let redis: TestRedis;
const started: GsfProcess[] = [];

test.before(async () => {
  redis = await startRedis();
});

test.after.always(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await redis?.stop();
});

type Three = [GsfProcess, GsfProcess, GsfProcess];

async function servers(count: 2 | 3, cluster: Record<string, unknown>, session: Record<string, unknown> = {}): Promise<Three> {
  const list = await Promise.all(Array.from({ length: count }, () => startGsf({
    Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 250, presence_ttl_in_ms: TTL, ...cluster },
    SessionService: { websocket_address: '127.0.0.1', websocket_port: 0, ...session },
  }, PLUGINS)));
  started.push(...list);
  for (const s of list) await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length >= count, 10000, 'live servers');
  return list as Three;
}

test.serial('a login on one server replaces the session of the account on another (4009); presence follows', async (t) => {
  const [a, b] = await servers(2, { cluster_name: 'replace' });
  const first = await a.connect();
  const second = await b.connect('msgpack');
  const firstId = (await first.request<{ sessionId: number }>('c.where')).sessionId;
  const secondId = (await second.request<{ sessionId: number }>('c.where')).sessionId;
  t.deepEqual(await first.request('login', { account: 'ada' }), { ok: true, replaced: null });
  t.deepEqual(await a.json('/v1/cluster/accounts/ada'), { status: 200, body: { account: 'ada', server: a.serverId, session: firstId } });
  t.deepEqual(await second.request('locate', { account: 'ada' }), { session: firstId, loggedIn: true });
  t.is(await second.request('account'), null);

  t.deepEqual(await second.request('login', { account: 'ada' }), { ok: true, replaced: firstId });
  t.deepEqual(await first.closed, { code: 4009, reason: "account 'ada' logged in from another session" });
  t.deepEqual(await b.json('/v1/cluster/accounts/ada'), { status: 200, body: { account: 'ada', server: b.serverId, session: secondId } });
  t.deepEqual(await a.json(`/v1/cluster/sessions/${secondId}`), { status: 200, body: { session: secondId, server: b.serverId, account: 'ada' } });
  t.deepEqual(await a.json(`/v1/cluster/sessions/${firstId}`),
    { status: 404, body: { error: 'GSF_ERR_CLUSTER_NOT_FOUND', message: `session ${firstId} is not on any live server` } });
  await waitFor(async () => (await a.json<{ value: number }>('/v1/counters/engine/concurrent_user/')).body.value === 0, 5000, 'A to drop the login');
  t.is((await b.json<{ value: number }>('/v1/counters/engine/concurrent_user/')).body.value, 1);
  t.like((await a.json('/v1/cluster/counters/engine/concurrent_user')).body, { value: 1 });
  t.like((await b.json('/v1/counters/coordination_stat/logins_replaced/')).body, { value: 1 });

  // A logout from another server ends the login where it is (the session stays open).
  const third = await a.connect();
  t.true(await third.request('logout', { account: 'ada' }));
  t.deepEqual(await a.json('/v1/cluster/accounts/ada'),
    { status: 404, body: { error: 'GSF_ERR_CLUSTER_NOT_FOUND', message: "account 'ada' is not logged in on any live server" } });
  t.is(await second.request('account'), null);
  t.false(await third.request('logout', { account: 'ada' }));
  await second.close();
  await third.close();
});

test.serial("with account_login_policy 'refuse' a second login on another server is refused", async (t) => {
  const [a, b] = await servers(2, { cluster_name: 'refuse' }, { account_login_policy: 'refuse' });
  const first = await a.connect();
  const second = await b.connect();
  const firstId = (await first.request<{ sessionId: number }>('c.where')).sessionId;
  t.like(await first.request('login', { account: 'grace' }), { ok: true });
  t.deepEqual(await second.request('login', { account: 'grace' }), { ok: false, reason: 'already_logged_in', sessionId: firstId });
  t.deepEqual(await b.json('/v1/cluster/accounts/grace'), { status: 200, body: { account: 'grace', server: a.serverId, session: firstId } });
  // Once the first session closes, the account is free everywhere.
  await first.close();
  await waitFor(async () => (await b.json('/v1/cluster/accounts/grace')).status === 404, 5000, 'the logout to reach Redis');
  t.like(await second.request('login', { account: 'grace' }), { ok: true, replaced: null });
  t.like((await b.json('/v1/counters/coordination_stat/logins_refused/')).body, { value: 1 });
  await second.close();
});

test.serial("a killed server's sessions and logins leave presence within the TTL; the others carry on", async (t) => {
  const [a, b, c] = await servers(3, { cluster_name: 'kill' }, { account_login_policy: 'refuse' });
  const onB = await b.connect();
  const bId = (await onB.request<{ sessionId: number }>('c.where')).sessionId;
  t.like(await onB.request('login', { account: 'linus' }), { ok: true });
  t.true(await onB.request('group', { group: 'hall', join: true }));
  const onA = await a.connect();
  const onC = await c.connect();
  const cId = (await onC.request<{ sessionId: number }>('c.where')).sessionId;
  await waitFor(() => redisCli(redis, 'SMEMBERS', 'kill:grp:hall') === b.serverId, 5000, "B's group in Redis");
  t.like((await a.json(`/v1/cluster/sessions/${bId}`)).body, { server: b.serverId, account: 'linus' });
  t.deepEqual(await onA.request('login', { account: 'linus' }), { ok: false, reason: 'already_logged_in', sessionId: bId });

  await b.kill();
  // Its last heartbeat was before the kill, so its presence expires within TTL ms; A may see it late on a loaded machine.
  const gone = await waitFor(async () => {
    const r = await a.json(`/v1/cluster/sessions/${bId}`);
    return r.status === 404 ? r : undefined;
  }, 4 * TTL, "B's presence to expire");
  t.deepEqual(gone,
    { status: 404, body: { error: 'GSF_ERR_CLUSTER_NOT_FOUND', message: `session ${bId} is not on any live server` } });
  t.is((await a.json('/v1/cluster/accounts/linus')).status, 404);
  t.deepEqual(await onA.request('login', { account: 'linus' }), { ok: true, replaced: null });

  // The work of the other servers went on: A to C messages, and A's own sessions.
  const pushed = collect(onC, 'pushed');
  t.true(await onA.request('push', { to: cId, body: 'still here' }));
  await waitFor(() => pushed.length === 1, 5000, 'the push to C');
  t.deepEqual(await onA.request('echo', { local: true }), { local: true });

  // A live server removes the dead one's presence: its keys are gone and it is no longer listed.
  await waitFor(async () => (await a.json<{ servers: Array<{ id: string }> }>('/v1/cluster/servers')).body.servers.length === 2, 5000, 'B to leave the list');
  await waitFor(() => redisCli(redis, 'EXISTS', `kill:sess:${bId}`) === '0', 5000, "B's session key to go");
  t.is(redisCli(redis, 'SMEMBERS', 'kill:grp:hall'), '');
  t.is(redisCli(redis, 'EXISTS', `kill:srvsess:${b.serverId}`), '0');
  const swept = (await a.json<{ value: number }>('/v1/cluster/counters/coordination_stat/swept_servers?aggregate=sum')).body.value;
  t.is(swept, 1);
  t.true(b.logs().every((l) => !l.includes('stopped')), 'B was killed, not stopped');
  await onA.close();
  await onC.close();
});

test.serial('a graceful stop removes the server from presence at once and leaves no key behind', async (t) => {
  const [a, b] = await servers(2, { cluster_name: 'stop', presence_ttl_in_ms: 60000 });
  const onB = await b.connect();
  const bId = (await onB.request<{ sessionId: number }>('c.where')).sessionId;
  t.like(await onB.request('login', { account: 'mary' }), { ok: true });
  t.is(await b.stop(), 0);
  t.is((await a.json(`/v1/cluster/sessions/${bId}`)).status, 404);
  t.is((await a.json('/v1/cluster/accounts/mary')).status, 404);
  const keys = redisCli(redis, 'KEYS', 'stop:*').split('\n').filter((k) => k.includes(b.serverId) || k.includes(String(bId)) || k.includes('mary'));
  t.deepEqual(keys, []);
  // A reads the list of live servers at its next heartbeat.
  await waitFor(async () => (await a.json<{ servers: Array<{ id: string }> }>('/v1/cluster/servers')).body.servers.length === 1, 5000, 'B to leave the list');
  t.deepEqual((await a.json<{ servers: Array<{ id: string }> }>('/v1/cluster/servers')).body.servers.map((s) => s.id), [a.serverId]);
});

test.serial('a server id in use by a live server stops the start; one left by a killed process is taken over once it expires', async (t) => {
  const twin = (ttl: number): ComponentList =>
    ({ Cluster: { redis_url: redis.url, cluster_name: 'twins', server_id: 'twin-a', heartbeat_interval_in_ms: 250, presence_ttl_in_ms: ttl } });
  // The killed process's TTL is far longer than a start takes, even on a loaded machine, so that the
  // next start finds its presence; once that start says it waits, the key is made to expire (what
  // Redis does when the TTL runs out), and the start takes the id over at its next look.
  const first = await startGsf(twin(60000), PLUGINS);
  started.push(first);
  // An explicit server_id is used as given.
  t.is(first.serverId, 'twin-a');

  const onFirst = await first.connect();
  const oldSession = (await onFirst.request<{ sessionId: number }>('c.where')).sessionId;
  await first.kill();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cluster-'));
  const starting = startGsf(twin(TTL), PLUGINS, dir);
  const log = path.join(dir, 'server.log');
  await waitFor(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes("server id 'twin-a' was used by pid"), 30000, 'the start to wait');
  t.is(redisCli(redis, 'PEXPIRE', 'twins:srv:twin-a', '1'), '1');
  const again = await starting;
  started.push(again);
  t.is(again.serverId, 'twin-a');
  t.true(again.logs().some((l) => /Cluster: server id 'twin-a' was used by pid \d+ on \S+; waiting \d+ ms for its presence to expire/.test(l)));
  // What the killed process registered is gone; the new one is live.
  t.is((await again.json(`/v1/cluster/sessions/${oldSession}`)).status, 404);
  const onAgain = await again.connect();
  const newSession = (await onAgain.request<{ sessionId: number }>('c.where')).sessionId;
  await waitFor(async () => (await again.json(`/v1/cluster/sessions/${newSession}`)).status === 200, 5000, 'the new session in presence');
  t.like((await again.json(`/v1/cluster/sessions/${newSession}`)).body, { server: 'twin-a' });

  const err = await startGsf(twin(TTL), PLUGINS).catch((e: Error) => e.message);
  t.regex(String(err), /exited 1: gsf: Cluster: server id 'twin-a' is used by a live server \(pid \d+ on \S+, started \S+\); give each server its own Cluster\.server_id/);
  await onAgain.close();
});

// docs/guides/cluster.md: server ids are unique. A process paused past its TTL looks dead, and a
// new process takes its id over; when the paused one runs again it finds its id taken, says so
// and leaves the cluster, instead of heartbeating the id beside the new owner.
test.serial('a paused process whose id was taken over leaves the cluster when it runs again; its stop removes nothing of the new owner', async (t) => {
  const twin = (ttl: number): ComponentList =>
    ({ Cluster: { redis_url: redis.url, cluster_name: 'paused', server_id: 'twin-p', heartbeat_interval_in_ms: 100, presence_ttl_in_ms: ttl } });
  const old = await startGsf(twin(60000), PLUGINS);
  started.push(old);
  old.child.kill('SIGSTOP');
  let fresh: GsfProcess;
  try {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cluster-'));
    const starting = startGsf(twin(TTL), PLUGINS, dir);
    const log = path.join(dir, 'server.log');
    await waitFor(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes("server id 'twin-p' was used by pid"), 30000, 'the start to wait');
    // The paused process's presence expires (what Redis does when its TTL runs out).
    t.is(redisCli(redis, 'PEXPIRE', 'paused:srv:twin-p', '1'), '1');
    fresh = await starting;
    started.push(fresh);
  } finally {
    old.child.kill('SIGCONT');
  }
  await waitFor(() => old.logs().some((l) => l.includes("GSF_ERR_CLUSTER_START: server id 'twin-p' was taken over by pid " + fresh.child.pid)), 10000, 'the old process to find its id taken');
  const holder = (): { pid: number } => JSON.parse(redisCli(redis, 'GET', 'paused:srv:twin-p')) as { pid: number };
  t.is(holder().pid, fresh.child.pid!);
  const onFresh = await fresh.connect();
  const session = (await onFresh.request<{ sessionId: number }>('c.where')).sessionId;
  await waitFor(async () => (await fresh.json(`/v1/cluster/sessions/${session}`)).status === 200, 5000, 'the new session in presence');
  // The old process stops: what the new owner holds stays.
  await old.stop();
  t.is(holder().pid, fresh.child.pid!);
  t.like(await fresh.json(`/v1/cluster/sessions/${session}`), { status: 200, body: { server: 'twin-p' } });
  await onFresh.close();
});
