/**
 * Redis going away and coming back. Messages for other servers accepted while Redis is away
 * wait, and arrive once it is back, in order and once each; past max_queued_messages they are
 * dropped with a log line and a counter. Meanwhile a server's own sessions are served as
 * always, and what needs Redis answers with a clear error. A start without Redis fails.
 */
import { test } from './_redis-test.ts';
import { Redis } from 'ioredis';
import { RecordWriter } from '../../src/cluster/records.ts';
import { waitFor } from './_server.ts';
import { collect, startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';
import { holdPort } from './_ports.ts';

const PLUGINS = ['session-probe', 'cluster-probe'];
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);
const value = async (s: GsfProcess, path: string): Promise<number> => (await s.json<{ value: number }>(`/v1/counters/${path}/`)).body.value;

async function pair(redis: TestRedis, cluster: Record<string, unknown> = {}, other: Record<string, Record<string, unknown>> = {}): Promise<[GsfProcess, GsfProcess]> {
  // A TTL long enough that a live server stalled on a loaded machine is not taken for dead.
  const args = { ...other, Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 200, presence_ttl_in_ms: 5000, ...cluster } };
  const servers = await Promise.all([startGsf(args, PLUGINS), startGsf(args, PLUGINS)]);
  for (const s of servers) await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 2, 10000, 'two servers');
  return servers as [GsfProcess, GsfProcess];
}

test.serial('Redis goes away and comes back empty: messages accepted meanwhile arrive in order, once; local work goes on', async (t) => {
  const redis = await startRedis();
  const [a, b] = await pair(redis);
  try {
    const sender = await a.connect();
    const neighbour = await a.connect('msgpack');
    const target = await b.connect();
    const targetId = (await target.request<{ sessionId: number }>('c.where')).sessionId;
    const neighbourId = (await neighbour.request<{ sessionId: number }>('c.where')).sessionId;
    t.like(await target.request('login', { account: 'kept' }), { ok: true });
    const got = collect<{ n: number }>(target, 'n');
    const local = collect<{ n: number }>(neighbour, 'n');
    t.deepEqual(await sender.request('c.stream', { to: targetId, from: 0, count: 200 }), { sent: 200 });
    await waitFor(() => got.length === 200, 10000, 'the first 200');

    await redis.kill();
    await waitFor(() => a.logs().some((l) => l.includes('Cluster: lost Redis at')), 5000, "A's log line");
    // Accepted while Redis is away: they wait on A.
    t.deepEqual(await sender.request('c.stream', { to: targetId, from: 200, count: 300 }), { sent: 300 });
    await waitFor(async () => (await value(a, 'rpc_stat/queued_messages')) === 300, 5000, '300 messages waiting');
    t.is(await value(a, 'coordination_stat/connected'), 0);
    // A's own sessions are served as always: a send between two sessions of A, and a reply.
    t.deepEqual(await sender.request('c.stream', { to: neighbourId, from: 0, count: 50 }), { sent: 50 });
    await waitFor(() => local.length === 50, 5000, 'the local sends');
    t.deepEqual(local.map((m) => m.n), range(0, 50));
    t.deepEqual(await neighbour.request('echo', 'still served'), 'still served');
    // What needs Redis says so.
    const put = await a.json<{ error: string; message: string }>('/v1/maintenance/update?cluster=true',
      { method: 'PUT', body: JSON.stringify({ date_start: '2030/01/01 00:00', date_end: '2030/01/01 01:00', messages: 'x' }) });
    t.is(put.status, 503);
    t.is(put.body.error, 'GSF_ERR_CLUSTER_UNAVAILABLE');
    // The reason follows once ioredis has seen the connection fail (a reset when Redis died with a
    // command in flight) or has tried to reconnect.
    t.regex(put.body.message, new RegExp(`^the cluster is unavailable: Redis at redis://127\\.0\\.0\\.1:${redis.port} is unreachable( \\((connect ECONNREFUSED 127\\.0\\.0\\.1:${redis.port}|read ECONNRESET)\\))?$`));
    t.like(await a.json('/v1/maintenance'), { status: 200, body: { under_maintenance: false } });
    t.like(await a.json('/v1/cluster/counters/engine/sessions'), { status: 503, body: { error: 'GSF_ERR_CLUSTER_UNAVAILABLE' } });
    const refused = await sender.request('login', { account: 'late' }).then(() => null, (err: { code: string; message: string }) => err);
    t.like(refused, { code: 'GSF_ERR_MESSAGE_HANDLER_FAILED', message: "the handler of 'login' failed" });
    t.true(a.logs().some((l) => l.includes("message handler 'login' failed: the cluster is unavailable: Redis at")), 'the log says why');

    await redis.start();
    await waitFor(() => got.length === 500, 15000, 'the 300 that waited');
    t.deepEqual(got.map((m) => m.n), range(0, 500));
    // Redis lost everything; both servers registered again, with their sessions and logins.
    await waitFor(async () => (await a.json('/v1/cluster/accounts/kept')).status === 200, 5000, 'the login registered again');
    t.like((await a.json('/v1/cluster/accounts/kept')).body, { server: b.serverId, session: targetId });
    t.is(await value(a, 'rpc_stat/queued_messages'), 0);
    t.is(await value(a, 'coordination_stat/data_losses'), 1);
    t.is(await value(b, 'coordination_stat/data_losses'), 1);
    t.true(a.logs().some((l) => /Cluster: Redis at redis:\/\/127\.0\.0\.1:\d+ is back after [\d.]+ s \(restarted without its data/.test(l)));
    t.is(await value(b, 'rpc_stat/lost_batches'), 0);
    // B saw A's batch sequence start again: whatever Redis held unread went with it, and B says so.
    t.is(await value(b, 'rpc_stat/sequence_restarts'), 1);
    t.true(b.logs().some((l) => new RegExp(`Cluster: the batch sequence of server ${a.serverId.replace(/\./g, '\\.')} started again after \\d+ \\(Redis lost its data\\)`).test(l)));
    // And new traffic flows.
    t.deepEqual(await sender.request('c.stream', { to: targetId, from: 500, count: 10 }), { sent: 10 });
    await waitFor(() => got.length === 510, 5000, 'new traffic');
    t.deepEqual(got.slice(500).map((m) => m.n), range(500, 10));
    t.is(got.length, 510);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  }
});

// docs/guides/cluster.md: a login whose claim Redis does not confirm within request_timeout_in_ms
// is refused, also when Redis holds the connection open and answers nothing (a stalled host).
test.serial('a login while Redis does not answer is refused within request_timeout_in_ms; the claim Redis makes later is let go', async (t) => {
  const redis = await startRedis();
  const [a, b] = await pair(redis, { request_timeout_in_ms: 500 });
  try {
    const client = await a.connect();
    t.is(await client.request('echo', 'warm'), 'warm');
    // Stopped (SIGSTOP): its connections stay open and nothing answers.
    const paused = redis.pause(6000);
    const login = client.request('login', { account: 'stalled' }).then(() => 'confirmed', (err: { code: string }) => err.code);
    t.is(await Promise.race([login, paused.then(() => 'Redis answered again first')]), 'GSF_ERR_MESSAGE_HANDLER_FAILED');
    await waitFor(() => a.logs().some((l) => l.includes("the login of 'stalled' was not confirmed by Redis within 500 ms")), 5000, 'the log line');
    // Lookups and cluster-wide changes answer 503 as well, not when Redis runs again.
    const lookup = a.json('/v1/cluster/accounts/stalled').then((r) => [r.status, r.body]);
    t.deepEqual(await Promise.race([lookup, paused.then(() => 'Redis answered again first')]),
      [503, { error: 'GSF_ERR_CLUSTER_UNAVAILABLE', message: `the cluster is unavailable: Redis at ${redis.url} did not answer the account lookup within 500 ms` }]);
    const change = a.json('/v1/maintenance/update?cluster=true', { method: 'PUT', body: JSON.stringify({ date_start: '2030/01/01 00:00', date_end: '2030/01/01 01:00', messages: 'x' }) })
      .then((r) => [r.status, r.body]);
    t.deepEqual(await Promise.race([change, paused.then(() => 'Redis answered again first')]),
      [503, { error: 'GSF_ERR_CLUSTER_UNAVAILABLE', message: `the cluster is unavailable: Redis at ${redis.url} did not answer the maintenance write within 500 ms` }]);
    await paused;
    // Redis ran the claim once it ran again: it is released, so no server holds the login.
    await waitFor(async () => (await b.json('/v1/cluster/accounts/stalled')).status === 404, 5000, 'the claim let go');
    t.like(await client.request('login', { account: 'stalled' }), { ok: true });
    t.is((await b.json('/v1/cluster/accounts/stalled')).status, 200);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  }
});

test.serial('past max_queued_messages, messages for other servers are dropped with a log line and a counter', async (t) => {
  const redis = await startRedis();
  const [a, b] = await pair(redis, { max_queued_messages: 50 });
  try {
    const sender = await a.connect();
    const target = await b.connect();
    const targetId = (await target.request<{ sessionId: number }>('c.where')).sessionId;
    const got = collect<{ n: number }>(target, 'n');
    await redis.kill();
    await waitFor(() => a.logs().some((l) => l.includes('Cluster: lost Redis at')), 5000, "A's log line");
    t.deepEqual(await sender.request('c.stream', { to: targetId, from: 0, count: 80 }), { sent: 80 });
    await waitFor(async () => (await value(a, 'rpc_stat/dropped_queue_full')) === 30, 5000, '30 drops');
    t.is(await value(a, 'engine/dropped_sends_cluster'), 30);
    t.true(a.logs().some((l) => l.includes('GSF_ERR_CLUSTER_DROPPED: 1 message(s) for other servers dropped: send to session') &&
      l.includes('50 message(s) already wait for Redis (max_queued_messages)')));
    await redis.start();
    await waitFor(() => got.length === 50, 15000, 'the 50 that waited');
    t.deepEqual(got.map((m) => m.n), range(0, 50));
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  }
});

test('a server whose Redis cannot be reached does not start, and says why', async (t) => {
  const held = await holdPort();
  const { port } = held;
  const err = await startGsf({ Cluster: { redis_url: `redis://127.0.0.1:${port}`, connect_timeout_in_ms: 300 } }, PLUGINS)
    .catch((e: Error) => e.message).finally(() => held.release());
  t.regex(String(err), new RegExp(`exited 1: gsf: Cluster: cannot reach Redis at redis://127\\.0\\.0\\.1:${port} within 300 ms \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\); check Cluster\\.redis_url and that Redis runs`));
});

/**
 * Two servers and a Redis client writing straight into B's stream, with a session on B whose
 * `n` frames are collected; `body` runs with them, and everything is stopped after.
 */
async function withStreamTarget(body: (s: { b: GsfProcess; writer: Redis; targetId: number; stream: string; got: Array<{ n: number }> }) => Promise<void>): Promise<void> {
  const redis = await startRedis();
  const [a, b] = await pair(redis);
  const writer = new Redis(redis.url);
  try {
    const target = await b.connect();
    const targetId = (await target.request<{ sessionId: number }>('c.where')).sessionId;
    const got = collect<{ n: number }>(target, 'n');
    await body({ b, writer, targetId, stream: `gsf:stream:${b.serverId}`, got });
  } finally {
    writer.disconnect();
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  }
}

test.serial('a batch sent twice is applied once; batches that never arrived are logged and counted', async (t) => {
  await withStreamTarget(async ({ b, writer, targetId, stream, got }) => {
    const batch = (n: number): Buffer => {
      const w = new RecordWriter();
      w.send(targetId, JSON.stringify({ type: 'n', body: { n } }));
      return w.take();
    };
    const entry = (bn: number, seq: number, n: number): Promise<unknown> =>
      writer.xadd(stream, '*', 's', 'other:1', 'e', 'e1', 'b', String(bn), 'q', String(seq), 'd', batch(n));
    await entry(1, 1, 1);
    await entry(1, 2, 1); // the same batch again: an answer was lost and it was sent twice
    await entry(2, 3, 2);
    await entry(5, 6, 5); // sequence 4 and 5 never arrived
    await waitFor(() => got.length === 3, 5000, 'three messages');
    t.deepEqual(got.map((m) => m.n), [1, 2, 5]);
    t.is(await value(b, 'rpc_stat/duplicate_batches'), 1);
    t.is(await value(b, 'rpc_stat/lost_batches'), 2);
    t.true(b.logs().some((l) => l.includes('Cluster: 2 batch(es) from server other:1 never arrived (sequence 4 to 5)')));
    // A batch that does not read to its end is logged, and what it held before the fault applied.
    const cut = Buffer.concat([batch(6), Buffer.from([1, 200, 0, 0, 0, 1])]);
    await writer.xadd(stream, '*', 's', 'other:1', 'e', 'e1', 'b', '6', 'q', '7', 'd', cut);
    await waitFor(() => got.length === 4, 5000, 'the readable part');
    t.is(got[3]!.n, 6);
    await waitFor(() => b.logs().some((l) => l.includes('Cluster: a batch from server other:1 could not be read to its end: a send record of 200 bytes is cut off')), 5000, 'the log line');
    t.is(await value(b, 'rpc_stat/bad_batches'), 1);
    // Read entries are trimmed away.
    await waitFor(async () => (await writer.xlen(stream)) <= 1, 5000, 'the stream to be trimmed');
  });
});

test.serial('a stream holding more batches than one read returns is applied in order, each batch once, and so is what comes after', async (t) => {
  await withStreamTarget(async ({ b, writer, targetId, stream, got }) => {
    // Batches 1..n of sender other:1, each one message `n`, written in one round trip.
    const write = async (from: number, count: number): Promise<void> => {
      const p = writer.pipeline();
      for (let n = from; n < from + count; n++) {
        const w = new RecordWriter();
        w.send(targetId, JSON.stringify({ type: 'n', body: { n } }));
        p.xadd(stream, '*', 's', 'other:1', 'e', 'e1', 'b', String(n), 'q', String(n), 'd', w.take());
      }
      await p.exec();
    };
    // 700 entries at once take three reads (256 entries each at most).
    await write(1, 700);
    await waitFor(() => got.length >= 700, 10000, 'the first 700 messages');
    // Then entries reach the read already waiting in Redis.
    for (let i = 0; i < 5; i++) await write(701 + i * 20, 20);
    await waitFor(() => got.length >= 800, 10000, 'all 800 messages');
    t.deepEqual(got.map((m) => m.n), range(1, 800));
    t.is(await value(b, 'rpc_stat/batches_received'), 800);
    t.is(await value(b, 'rpc_stat/duplicate_batches'), 0);
    t.is(await value(b, 'rpc_stat/lost_batches'), 0);
  });
});

test.serial('a Redis operation slower than warning_threshold_slow_distribution_in_sec writes the slow-distribution line', async (t) => {
  const redis = await startRedis();
  const [a, b] = await pair(redis, {}, { CounterService: { warning_threshold_slow_distribution_in_sec: 1 } });
  try {
    const sender = await a.connect();
    const target = await b.connect();
    const targetId = (await target.request<{ sessionId: number }>('c.where')).sessionId;
    const got = collect<{ n: number }>(target, 'n');
    // Redis freezes for 1.5 s: longer than the threshold (1 s here).
    const pause = redis.pause(1500);
    await new Promise((r) => setTimeout(r, 100));
    t.deepEqual(await sender.request('c.stream', { to: targetId, from: 0, count: 5 }), { sent: 5 });
    await pause;
    await waitFor(() => got.length === 5, 5000, 'the messages after the pause');
    t.deepEqual(got.map((m) => m.n), range(0, 5));
    const line = await waitFor(() => a.logs().find((l) => l.includes('Slow distribution: store=redis, operation=')), 5000, 'the line');
    const m = /^W\S+ \S+ main\] Slow distribution: store=redis, operation=(heartbeat|flush of \d+ message\(s\)), time=(\d+\.\d{3})s$/.exec(line);
    t.truthy(m, line);
    t.true(Number(m![2]) > 1, line);
    t.true(await value(a, 'coordination_stat/slow_operations') >= 1);
    t.true(await value(a, 'coordination_stat/command_latency_max_in_sec') >= 1);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  }
});
