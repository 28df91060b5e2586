/**
 * /v1/cluster/counters/ on two servers sharing one Redis: a counter path is split as
 * /v1/counters/ splits it ('%2F' in a name included), and a counter no answering server has is
 * not reported missing everywhere while a server did not answer.
 */
import { test } from './_redis-test.ts';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './_server.ts';
import { startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'cluster-counter-names');
let redis: TestRedis;
let a: GsfProcess, b: GsfProcess;

test.before(async () => {
  redis = await startRedis();
  const args = { Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 200, presence_ttl_in_ms: 5000, request_timeout_in_ms: 1000 } };
  [a, b] = await Promise.all([startGsf(args, [PLUGIN]), startGsf(args, [PLUGIN])]);
  for (const s of [a, b]) await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 2, 10000, 'two servers');
});

test.after.always(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await redis?.stop();
});

test.serial('a counter name written with %2F reads through the cluster route as through /v1/counters/', async (t) => {
  t.deepEqual(await a.json('/v1/counters/pp/trail%2F'), { status: 200, body: { category: 'pp', counter: 'trail/', value: 5 } });
  t.deepEqual(await a.json('/v1/cluster/counters/pp/trail%2F'), {
    status: 200,
    body: { category: 'pp', counter: 'trail/', aggregate: 'sum', value: 10, servers: { [a.serverId]: 5, [b.serverId]: 5 }, missing: [], failed: {} },
  });
});

test.serial('a counter name with an empty segment reads through the cluster route', async (t) => {
  t.deepEqual(await a.json('/v1/counters/pp/a%2F%2Fb'), { status: 200, body: { category: 'pp', counter: 'a//b', value: 7 } });
  t.deepEqual(await a.json('/v1/cluster/counters/pp/a%2F%2Fb'), {
    status: 200,
    body: { category: 'pp', counter: 'a//b', aggregate: 'sum', value: 14, servers: { [a.serverId]: 7, [b.serverId]: 7 }, missing: [], failed: {} },
  });
});

test.serial('a counter only a stalled server has: 503 naming it in failed, not a 404 "on any server"', async (t) => {
  const c = await b.connect();
  t.true(await c.request('p.set', { category: 'pp', name: 'only_b', value: 3 }));
  t.deepEqual(await a.json('/v1/cluster/counters/pp/only_b'), {
    status: 200, body: { category: 'pp', counter: 'only_b', aggregate: 'sum', value: 3, servers: { [b.serverId]: 3 }, missing: [a.serverId], failed: {} },
  });
  c.close();
  b.child.kill('SIGSTOP');
  try {
    t.deepEqual(await a.json('/v1/cluster/counters/pp/only_b'), {
      status: 503,
      body: {
        error: 'GSF_ERR_CLUSTER_UNAVAILABLE',
        message: `the cluster is unavailable: no counter 'pp/only_b' on the servers that read it, and 1 failed to (${b.serverId}): see failed`,
        missing: [a.serverId],
        failed: { [b.serverId]: `server '${b.serverId}' did not answer counter within 1000 ms` },
      },
    });
  } finally {
    b.child.kill('SIGCONT');
  }
  // A counter no server has is still a 404 once every server answers; one whose reading fails everywhere is not.
  t.deepEqual(await a.json('/v1/cluster/counters/pp/nobody'), {
    status: 404, body: { error: 'GSF_ERR_COUNTER_NOT_FOUND', message: "no counter 'pp/nobody' on any server" },
  });
  const both = [a.serverId, b.serverId].sort();
  t.deepEqual(await a.json('/v1/cluster/counters/pp/throws'), {
    status: 503,
    body: {
      error: 'GSF_ERR_CLUSTER_UNAVAILABLE',
      message: `the cluster is unavailable: no counter 'pp/throws' on the servers that read it, and 2 failed to (${both.join(', ')}): see failed`,
      missing: [],
      failed: { [a.serverId]: 'boom', [b.serverId]: `server ${b.serverId}: boom` },
    },
  });
});
