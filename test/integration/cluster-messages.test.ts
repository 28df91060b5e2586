/**
 * Messages between servers: three `gsf start` processes on one real Redis. A send, a
 * broadcast, a group publish, a close and a group join reach sessions on other servers; an
 * event runs on a named server; order per target session holds across servers while other
 * sessions' traffic flows; cluster counters, `/metrics` and message logging see all of it.
 */
import { test } from './_redis-test.ts';
import { spawnSync } from 'node:child_process';
import type { GsfClient } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { collect, redisCli, startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';

let redis: TestRedis;
let a: GsfProcess, b: GsfProcess, c: GsfProcess;
const PLUGINS = ['session-probe', 'cluster-probe'];

test.before(async () => {
  redis = await startRedis();
  // A TTL long enough that a live server stalled on a loaded machine is not taken for dead.
  const cluster = { Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 200, presence_ttl_in_ms: 5000 } };
  [a, b, c] = await Promise.all([startGsf(cluster, PLUGINS), startGsf(cluster, PLUGINS), startGsf(cluster, PLUGINS)]);
  // Every server has seen the others in a heartbeat.
  for (const s of [a, b, c]) await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 3, 10000, 'three live servers');
});

test.after.always(async () => {
  await Promise.all([a, b, c].filter(Boolean).map((s) => s.stop()));
  await redis?.stop();
});

async function session(s: GsfProcess, codec: 'json' | 'msgpack' = 'json'): Promise<{ client: GsfClient; id: number; server: string }> {
  const client = await s.connect(codec);
  const where = await client.request<{ sessionId: number; server: string }>('c.where');
  return { client, id: where.sessionId, server: where.server };
}

const counter = async (s: GsfProcess, path: string): Promise<number> => (await s.json<{ value: number }>(`/v1/counters/${path}/`)).body.value;

test.serial('each server knows its id and the live servers', async (t) => {
  t.regex(a.serverId, /^[^:]+:\d+$/);
  t.is(a.serverId.split(':')[1], String(a.wsPort));
  const x = await session(a);
  t.is(x.server, a.serverId);
  t.deepEqual(await x.client.request('c.servers'), [a.serverId, b.serverId, c.serverId].sort());
  const listed = await a.json<{ server: string; servers: Array<{ id: string; websocket: string; api: string }> }>('/v1/cluster/servers');
  t.is(listed.body.server, a.serverId);
  t.deepEqual(listed.body.servers.map((s) => s.id), [a.serverId, b.serverId, c.serverId].sort());
  t.is(listed.body.servers.find((s) => s.id === b.serverId)!.websocket, `127.0.0.1:${b.wsPort}`);
  await x.client.close();
});

test.serial('a send, a close and a group join reach a session on another server; unknown sessions are counted', async (t) => {
  const x = await session(a, 'json');
  const y = await session(b, 'msgpack');
  const pushed = collect(y.client, 'pushed');
  t.true(await x.client.request('push', { to: y.id, body: { text: 'hello from A', n: 1 } }));
  await waitFor(() => pushed.length === 1, 5000, 'the push');
  t.deepEqual(pushed, [{ text: 'hello from A', n: 1 }]);

  // A joins B's session to a group; a publish on C reaches it, and no one else.
  const z = await session(c);
  const news = collect(y.client, 'group.news');
  const notMember = collect(z.client, 'group.news');
  t.true(await x.client.request('c.enrol', { session: y.id, group: 'g1' }));
  // The join travels A → B, and B tells Redis it has a member: from then on publishes reach it.
  await waitFor(() => redisCli(redis, 'SISMEMBER', 'gsf:grp:g1', b.serverId) === '1', 5000, "B's membership in Redis");
  t.true(await z.client.request('publish', { group: 'g1', body: { round: 1 } }));
  await waitFor(() => news.length === 1, 5000, 'the publish');
  t.deepEqual(news, [{ round: 1 }]);
  t.deepEqual(notMember, []);

  // A unknown session id: dropped and counted on the sending server.
  const before = await counter(a, 'rpc_stat/dropped_unroutable');
  t.true(await x.client.request('push', { to: 4503599627370496, body: 'nobody' }));
  await waitFor(async () => (await counter(a, 'rpc_stat/dropped_unroutable')) === before + 1, 5000, 'the drop to be counted');

  // A closes B's session: it closes with 4010 and the reason.
  t.true(await x.client.request('c.kick', { to: y.id, reason: 'bye from A' }));
  t.like(await y.client.closed, { code: 4010, reason: 'bye from A' });
  await x.client.close();
  await z.client.close();
});

test.serial('a send to a closed session of another server is counted in rpc_stat/dropped_unroutable and logged, also once the sender knows its server', async (t) => {
  // cluster.md, Order: a message for a session no live server holds is dropped, counted in
  // rpc_stat/dropped_unroutable and engine/dropped_sends_no_session, and logged. A sender that
  // sent to the session before writes straight to its server (no lookup in Redis): the server
  // that finds it closed counts and logs the drop as a sender that looked it up does.
  t.is((await a.json('/v1/configurations/rpc_message_logging_level/1?cluster=true', { method: 'PUT' })).status, 200);
  try {
    const x = await session(a);
    const y = await session(b);
    const pushed = collect(y.client, 'pushed');
    t.true(await x.client.request('push', { to: y.id, body: 1 }));
    await waitFor(() => pushed.length === 1, 5000, 'the first push');
    await y.client.close();
    await waitFor(async () => (await a.json(`/v1/cluster/sessions/${y.id}`)).status === 404, 5000, 'the session gone from presence');
    const cluster = async (path: string): Promise<number> => (await a.json<{ value: number | null }>(`/v1/cluster/counters/${path}`)).body.value ?? 0;
    const unroutable = await cluster('rpc_stat/dropped_unroutable');
    const noSession = await cluster('engine/dropped_sends_no_session');
    t.true(await x.client.request('push', { to: y.id, body: 2 }));
    await waitFor(async () => (await cluster('engine/dropped_sends_no_session')) === noSession + 1, 5000, 'the drop in engine/dropped_sends_no_session');
    t.is(await cluster('rpc_stat/dropped_unroutable'), unroutable + 1, 'the drop in rpc_stat/dropped_unroutable (summed over the servers)');
    t.true(b.logs().some((l) => l.endsWith(`rpc message dropped: session=${y.id} closed on this server (1 message(s))`)), 'B logs the drop');
    await x.client.close();
  } finally {
    await a.api('/v1/configurations/rpc_message_logging_level/0?cluster=true', { method: 'PUT' });
  }
});

test.serial('a broadcast to all reaches every server; a publish reaches members on every server', async (t) => {
  const [x, y, z] = await Promise.all([session(a), session(b, 'msgpack'), session(c)]);
  const seen = [x, y, z].map((s) => collect(s.client, 'news'));
  t.true(await y.client.request('broadcast', { body: { from: 'B' } }));
  await waitFor(() => seen.every((l) => l.length === 1), 5000, 'the broadcast on every server');
  t.deepEqual(seen, [[{ from: 'B' }], [{ from: 'B' }], [{ from: 'B' }]]);

  for (const s of [x, y]) t.true(await s.client.request('group', { group: 'room', join: true }));
  const room = [x, y, z].map((s) => collect(s.client, 'group.news'));
  // A join reaches Redis with its server's next flush, right after the reply.
  await waitFor(() => redisCli(redis, 'SMEMBERS', 'gsf:grp:room').split('\n').length === 2, 5000, 'both servers in the room');
  t.true(await z.client.request('publish', { group: 'room', body: { text: 'hi room' } }));
  await waitFor(() => room[0]!.length === 1 && room[1]!.length === 1, 5000, 'the room publish');
  t.deepEqual(room, [[{ text: 'hi room' }], [{ text: 'hi room' }], []]);
  await Promise.all([x, y, z].map((s) => s.client.close()));
});

test.serial('messages to one session keep their order across servers, from two servers at once, next to other traffic', async (t) => {
  const target = await session(b);
  const other = await session(b, 'msgpack');
  const fromA = await session(a);
  const fromC = await session(c, 'msgpack');
  const local = await session(b);
  const got = collect<{ n: number }>(target.client, 'n');
  const otherGot = collect<{ n: number }>(other.client, 'n');
  const N = 1500;
  const jobs: Array<Promise<unknown>> = [];
  // A sends 0..N-1 and C sends N..2N-1 to `target`, in rounds of 100 per request; B's own
  // session sends to `other` meanwhile.
  for (let i = 0; i < N; i += 100) {
    jobs.push(fromA.client.request('c.stream', { to: target.id, from: i, count: 100 }));
    jobs.push(fromC.client.request('c.stream', { to: target.id, from: N + i, count: 100 }));
    jobs.push(local.client.request('c.stream', { to: other.id, from: i, count: 100 }));
  }
  await Promise.all(jobs);
  await waitFor(() => got.length === 2 * N && otherGot.length === N, 20000, 'every message');
  const fromAOrder = got.map((m) => m.n).filter((n) => n < N);
  const fromCOrder = got.map((m) => m.n).filter((n) => n >= N);
  t.deepEqual(fromAOrder, Array.from({ length: N }, (_, i) => i));
  t.deepEqual(fromCOrder, Array.from({ length: N }, (_, i) => N + i));
  t.deepEqual(otherGot.map((m) => m.n), Array.from({ length: N }, (_, i) => i));
  t.true(await counter(a, 'rpc_stat/messages_sent') >= N);
  t.true(await counter(b, 'rpc_stat/messages_received') >= 2 * N);
  t.is(await counter(b, 'rpc_stat/lost_batches'), 0);
  await Promise.all([target, other, fromA, fromC, local].map((s) => s.client.close()));
});

test.serial('an event runs on a named server; an unknown server or event is an error the caller sees', async (t) => {
  const x = await session(a);
  const y = await session(c);
  const invoked = collect<{ text: string; from: string; ranOn: string; name: string }>(y.client, 'invoked');
  const r = await x.client.request<{ ok: boolean; id: number }>('c.remote', { server: c.serverId, to: y.id, text: 'run there' });
  t.true(r.ok);
  t.true(Number.isInteger(r.id) && r.id > 0);
  await waitFor(() => invoked.length === 1, 5000, 'the invoked event');
  t.deepEqual(invoked[0], { text: 'run there', from: a.serverId, ranOn: c.serverId, name: 'cluster-probe.hello' });
  t.deepEqual(await x.client.request('c.remote', { server: 'nowhere:1', to: y.id, text: 'x' }),
    { ok: false, error: "no live server 'nowhere:1' in the cluster" });
  t.true(await counter(c, 'rpc_stat/invokes_received') >= 1);
  await x.client.close();
  await y.client.close();
});

test.serial('a payload crosses to another server as an event carries it; one that cannot be encoded is refused at once and counts nothing', async (t) => {
  const x = await session(a);
  // A BigInt past 64 bits, as a local event carries it.
  t.deepEqual(await x.client.request('c.remote-payload', { server: c.serverId, kind: 'big' }), { ok: true });
  t.truthy(await waitFor(() => c.logs().find((l) => l.includes('cluster-probe.typed bigint 1180591620717411303424')), 5000, 'the typed event'));
  // An object that refers to itself: refused with the reason, and nothing left waiting for Redis.
  const cyclic = await x.client.request<{ ok: boolean; code: string; error: string }>('c.remote-payload', { server: c.serverId, kind: 'cycle' });
  t.like(cyclic, { ok: false, code: 'GSF_ERR_BAD_ARGUMENT' });
  t.regex(cyclic.error, /^the arguments cannot be encoded for another server: /);
  // One msgpack encodes and cannot read back (a Map keyed by an object): refused at once too,
  // not found unreadable by the other server while the caller waits out its timeout.
  const keyed = await x.client.request<{ ok: boolean; code: string; error: string }>('c.remote-payload', { server: c.serverId, kind: 'object-keys' });
  t.like(keyed, { ok: false, code: 'GSF_ERR_BAD_ARGUMENT' });
  t.regex(keyed.error, /^the arguments cannot be read back by another server \(.+\): a Map's keys must be strings, numbers or booleans$/);
  t.deepEqual(await x.client.request('c.remote-payload', { server: c.serverId, kind: 'big' }), { ok: true });
  t.is(await counter(a, 'rpc_stat/queued_messages'), 0);
  await x.client.close();
});

test.serial('GET /v1/cluster/sessions/<id> takes a positive integer in decimal digits only', async (t) => {
  for (const id of ['0x10', '1e3', '+7', '1.0', '007', '0', '-1', '9007199254740992']) {
    t.deepEqual(await a.json(`/v1/cluster/sessions/${encodeURIComponent(id)}`),
      { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: `session must be a positive integer (got '${id}')` } }, id);
  }
  t.like(await a.json('/v1/cluster/sessions/16'), { status: 404, body: { error: 'GSF_ERR_CLUSTER_NOT_FOUND' } });
});

test.serial('a message to an account reaches its session on any server', async (t) => {
  const x = await session(a);
  const y = await session(b, 'msgpack');
  t.like(await y.client.request('login', { account: 'teller-target' }), { ok: true });
  const told = collect(y.client, 'told');
  t.true(await x.client.request('c.tell', { account: 'teller-target', body: { secret: 42 } }));
  t.false(await x.client.request('c.tell', { account: 'nobody-at-all', body: {} }));
  await waitFor(() => told.length === 1, 5000, 'the message');
  t.deepEqual(told, [{ secret: 42 }]);
  t.deepEqual(await x.client.request('locate', { account: 'teller-target' }), { session: y.id, loggedIn: true });
  await x.client.close();
  await y.client.close();
});

test.serial('cluster counters sum or max over the servers; /metrics carries the server label and passes promtool', async (t) => {
  const clients = await Promise.all([session(a), session(b), session(b), session(c)]);
  const sessions = await a.json<{ category: string; counter: string; aggregate: string; value: number; servers: Record<string, number>; missing: string[] }>('/v1/cluster/counters/engine/sessions');
  t.is(sessions.status, 200);
  t.like(sessions.body, { category: 'engine', counter: 'sessions', aggregate: 'sum', missing: [] });
  t.deepEqual(sessions.body.servers, { [a.serverId]: 1, [b.serverId]: 2, [c.serverId]: 1 });
  t.is(sessions.body.value, 4);
  t.like((await a.json('/v1/cluster/counters/engine/sessions?aggregate=max')).body, { aggregate: 'max', value: 2 });
  t.like((await a.json('/v1/cluster/counters/engine/sessions/?aggregate=min')).body, { aggregate: 'min', value: 1 });
  t.like((await a.json('/v1/cluster/counters/os/cpus')).body, { aggregate: 'max' });
  t.like((await a.json('/v1/cluster/counters/coordination_stat/cluster_servers')).body, { aggregate: 'max', value: 3 });
  t.deepEqual(await a.json('/v1/cluster/counters/engine/sessions?aggregate=median'),
    { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "aggregate must be one of sum, max, min, mean (got 'median')" } });
  t.deepEqual(await a.json('/v1/cluster/counters/engine/nope'),
    { status: 404, body: { error: 'GSF_ERR_COUNTER_NOT_FOUND', message: "no counter 'engine/nope' on any server" } });

  const metrics = await (await b.api('/metrics')).text();
  t.regex(metrics, new RegExp(`^gsf_sessions\\{server="${b.serverId}"\\} 2$`, 'm'));
  t.regex(metrics, new RegExp(`^gsf_cluster_servers\\{server="${b.serverId}"\\} 3$`, 'm'));
  t.regex(metrics, /^gsf_cluster_records_total\{direction="received",server="[^"]+"\} \d+$/m);
  t.regex(metrics, /^gsf_cluster_redis_connected\{server="[^"]+"\} 1$/m);
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: metrics, encoding: 'utf8' });
  if (promtool.error === undefined) t.is(`${promtool.stdout}${promtool.stderr}`, '');
  await Promise.all(clients.map((s) => s.client.close()));
});

test.serial('rpc_message_logging_level logs messages between servers, escaped, on the servers a change with cluster=true reached', async (t) => {
  // Sent as 02: the answer and every server have the value stored, 2.
  const set = await a.json<Record<string, { result: string; cluster: { applied: string[]; failed: Record<string, string> } }>>(
    '/v1/configurations/rpc_message_logging_level/02?cluster=true', { method: 'PUT' });
  t.is(set.status, 200);
  t.is(set.body.rpc_message_logging_level!.result, 'rpc_message_logging_level set to 2\n');
  t.deepEqual(set.body.rpc_message_logging_level!.cluster, { applied: [a.serverId, b.serverId, c.serverId].sort(), failed: {} });
  for (const s of [b, c]) t.like((await s.json('/v1/configurations/rpc_message_logging_level')).body, { rpc_message_logging_level: { value: '2' } });
  try {
    const x = await session(a);
    const y = await session(b);
    const pushed = collect(y.client, 'pushed');
    await x.client.request('push', { to: y.id, body: 'line one\nE20991231 00:00:00.000 main] FORGED' });
    await waitFor(() => pushed.length === 1, 5000, 'the push');
    const out = await waitFor(() => a.logs().find((l) => l.includes('rpc message out:') && l.includes(`session=${y.id}`)), 5000, 'the out line');
    const inn = await waitFor(() => b.logs().find((l) => l.includes(`rpc message in: from=${a.serverId}`) && l.includes(`session=${y.id}`)), 5000, 'the in line');
    t.regex(out, /kind=send, session=\d+, type=pushed, length=\d+, message=\{"type":"pushed","body":"line one\\nE20991231/);
    t.regex(inn, /kind=send, session=\d+, type=pushed, length=\d+, message=/);
    // A group name is the client's text as it is: the logger escapes its line feed.
    const group = 'g\nE20991231 00:00:00.000 main] FORGED';
    t.true(await y.client.request('group', { group, join: true }));
    const news = collect(y.client, 'group.news');
    await waitFor(async () => {
      await x.client.request('publish', { group, body: 1 });
      return news.length > 0;
    }, 5000, 'the publish');
    const published = await waitFor(() => b.logs().find((l) => l.includes('rpc message in:') && l.includes('kind=publish')), 5000, 'the publish line');
    t.true(published.includes('group=g\\nE20991231 00:00:00.000 main] FORGED, type=group.news'), published);
    t.false(b.logs().some((l) => l.startsWith('E20991231')), 'a client text cannot start a log line');
    await x.client.close();
    await y.client.close();
  } finally {
    await a.api('/v1/configurations/rpc_message_logging_level/0?cluster=true', { method: 'PUT' });
  }
  t.deepEqual(await a.json('/v1/configurations/v/1?cluster=maybe', { method: 'PUT' }),
    { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "cluster must be true or false (got 'maybe')" } });
  t.like(await a.json('/v1/configurations/v/loud?cluster=true', { method: 'PUT' }), { status: 400, body: { v: { result: 'loud is not a valid value for v\n' } } });
  t.like((await b.json('/v1/configurations/v')).body, { v: { value: '0' } });
});

test.serial('compatible client versions set with cluster=true apply on every server; without it, on one', async (t) => {
  const all = await c.json('/v1/configurations/compatible_client_versions?cluster=true', { method: 'POST', body: JSON.stringify(['0.9.0', '0.9.1']) });
  t.deepEqual(all, { status: 200, body: { current_compatible_versions: ['0.9.0', '0.9.1'], cluster: { applied: [a.serverId, b.serverId, c.serverId].sort(), failed: {} } } });
  for (const s of [a, b]) t.deepEqual((await s.json('/v1/configurations/compatible_client_versions')).body, { current_compatible_versions: ['0.9.0', '0.9.1'] });
  t.deepEqual((await a.json('/v1/configurations/compatible_client_versions', { method: 'POST', body: '["0.8.0"]' })).body, { current_compatible_versions: ['0.8.0'] });
  t.deepEqual((await b.json('/v1/configurations/compatible_client_versions')).body, { current_compatible_versions: ['0.9.0', '0.9.1'] });
  t.like(await b.json('/v1/configurations/compatible_client_versions?cluster=true', { method: 'POST', body: '{"x":1}' }),
    { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST' } });
  t.deepEqual((await c.json('/v1/configurations/compatible_client_versions')).body, { current_compatible_versions: ['0.9.0', '0.9.1'] });
});
