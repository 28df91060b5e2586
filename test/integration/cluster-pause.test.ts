/**
 * A server paused (SIGSTOP) past its presence TTL, then resumed (SIGCONT), on a real Redis:
 * what another server wrote for it before its presence expired is delivered, in order, once it
 * is back; what was routed after is dropped, counted and logged as meant for a server whose
 * presence expired. The resumed server registers again and reads its stream from where it left
 * off, and neither side takes the pause for lost batches or for Redis losing its data.
 */
import { test } from './_redis-test.ts';
import { waitFor } from './_server.ts';
import { collect, redisCli, startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';

const PLUGINS = ['session-probe', 'cluster-probe'];
const TTL = 2000;

let redis: TestRedis;
const started: GsfProcess[] = [];

test.before(async () => {
  redis = await startRedis();
});

test.after.always(async () => {
  for (const s of started) s.child.kill('SIGCONT');
  await Promise.all(started.map((s) => s.stop()));
  await redis?.stop();
});

const counter = async (s: GsfProcess, path: string): Promise<number> => (await s.json<{ value: number }>(`/v1/counters/${path}/`)).body.value;
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test.serial('lines written before a paused server expired arrive when it resumes; later ones are counted as unroutable', async (t) => {
  const cluster = { Cluster: { redis_url: redis.url, cluster_name: 'pause', heartbeat_interval_in_ms: 250, presence_ttl_in_ms: TTL } };
  const [a, b] = await Promise.all([startGsf(cluster, PLUGINS), startGsf(cluster, PLUGINS)]);
  started.push(a, b);
  for (const s of [a, b]) await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 2, 10000, 'two live servers');
  const x = await a.connect();
  const y = await b.connect();
  const yId = (await y.request<{ sessionId: number }>('c.where')).sessionId;
  const xId = (await x.request<{ sessionId: number }>('c.where')).sessionId;
  const toY = collect(y, 'pushed');
  const toX = collect(x, 'pushed');
  // Both directions have carried a batch: A knows where y is, and B's sequence towards A has begun.
  t.true(await x.request('push', { to: yId, body: 'warm' }));
  t.true(await y.request('push', { to: xId, body: 'warm' }));
  await waitFor(() => toY.length === 1 && toX.length === 1, 5000, 'the first lines');
  const dropped0 = await counter(a, 'rpc_stat/dropped_unroutable');

  const presence = (): string => redisCli(redis, 'EXISTS', `pause:srv:${b.serverId}`);
  b.child.kill('SIGSTOP');
  // Lines go to y until B's presence has expired (those before reached its stream), then a few more.
  let n = 0;
  const send = async (): Promise<void> => {
    t.true(await x.request('push', { to: yId, body: ++n }));
  };
  await waitFor(async () => {
    await send();
    await new Promise((r) => setTimeout(r, 20));
    return presence() === '0';
  }, 10 * TTL, "B's presence to expire");
  await send();
  // A live server removes B's presence (its sessions, groups, logins) as it would a dead server's.
  await waitFor(() => redisCli(redis, 'EXISTS', `pause:sess:${yId}`) === '0', 10 * TTL, "B's presence to be removed");
  await send();
  await send();
  await waitFor(async () => (await counter(a, 'rpc_stat/queued_messages')) === 0 &&
    (await counter(a, 'rpc_stat/dropped_unroutable')) - dropped0 >= 3, 10000, 'the lines after the expiry to be dropped');

  b.child.kill('SIGCONT');
  await waitFor(() => presence() === '1' && redisCli(redis, 'HGET', `pause:sess:${yId}`, 's') === b.serverId, 10000, 'B to register again');
  t.true(await x.request('push', { to: yId, body: 'after' }));
  t.true(await y.request('push', { to: xId, body: 'after' }));
  await waitFor(() => toY.at(-1) === 'after' && toX.at(-1) === 'after', 10000, 'the lines after the resume');

  // y got 'warm', then every line A wrote before the expiry, in order, then 'after'; the rest were counted.
  const delivered = toY.slice(1, -1);
  t.true(delivered.length >= 1);
  t.deepEqual(delivered, Array.from({ length: delivered.length }, (_, i) => i + 1));
  t.is((await counter(a, 'rpc_stat/dropped_unroutable')) - dropped0, n - delivered.length);
  t.deepEqual(toX, ['warm', 'after']);

  const [aLogs, bLogs] = [a.logs(), b.logs()];
  t.true(aLogs.some((l) => new RegExp(`GSF_ERR_CLUSTER_DROPPED: \\d+ message\\(s\\) for server ${escape(b.serverId)} dropped: its presence expired`).test(l)), aLogs.join('\n'));
  t.true(bLogs.some((l) => /Cluster: this process was paused or stalled for \d+ ms \(presence_ttl_in_ms 2000\), so its presence expired; registering again, and reading its stream from where it left off/.test(l)), bLogs.join('\n'));
  t.false(bLogs.some((l) => l.includes('never arrived')), bLogs.join('\n'));
  t.false(aLogs.some((l) => l.includes('started again')), aLogs.join('\n'));
  t.is(await counter(b, 'rpc_stat/lost_batches'), 0);
  t.is(await counter(a, 'rpc_stat/sequence_restarts'), 0);
  await x.close();
  await y.close();
});
