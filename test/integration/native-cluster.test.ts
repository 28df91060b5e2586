/**
 * ABI 1.2 cluster calls of a native plugin across two servers on a real Redis (and PostgreSQL for
 * the objects the probe declares): cluster_invoke
 * runs the event on the server it names (with the plugin's payload), and
 * cluster_send_to_account reaches the account's session on the other server. The probe logs
 * each continuation's answer; the event is started through cluster-probe's `c.invoke`.
 */
import path from 'node:path';
import { testWithPostgres as test } from './_redis-test.ts';
import { fixtures, waitFor } from './_server.ts';
import { collect, startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';
import { startPostgres, type TestPostgres } from './_postgres.ts';

const PROBE = path.join(fixtures, 'native-plugins', 'native-results');
const PLUGINS = ['session-probe', 'cluster-probe', 'objects-probe', PROBE];

let redis: TestRedis;
let postgres: TestPostgres;
let database: string;
const started: GsfProcess[] = [];

test.before(async () => {
  // The probe declares object types: servers of a cluster share them on PostgreSQL.
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  database = await postgres.database('native_cluster');
});

test.after.always(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await redis?.stop();
  await postgres?.stop();
});

const line = (s: GsfProcess, text: string): Promise<string> =>
  waitFor(() => s.logs().find((l) => l.includes(text)), 20000, text);

test('cluster_invoke runs the event on the named server; cluster_send_to_account reaches the account there', async (t) => {
  const cluster = { redis_url: redis.url, cluster_name: 'native', heartbeat_interval_in_ms: 250, presence_ttl_in_ms: 5000 };
  const components = { Cluster: cluster, ObjectStore: { database_url: database } };
  const [a, b] = await Promise.all([startGsf(components, PLUGINS), startGsf(components, PLUGINS)]);
  started.push(a!, b!);
  for (const s of [a!, b!]) {
    await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 2, 10000, 'both servers live');
  }
  const onB = await b!.connect();
  const onA = await a!.connect();
  try {
    t.like(await onB.request('login', { account: 'ada' }), { ok: true });
    const told = collect<{ n: number }>(onB, 'native.hello');
    await waitFor(async () => (await a!.json('/v1/cluster/accounts/ada')).status === 200, 5000, "ada's login in presence");

    // The probe invokes `cluster-probe.heard` on B with the msgpack string "hello", and sends
    // `native.hello {n: 7}` to account ada.
    await onA.request('c.invoke', { event: 'results.cluster', payload: [b!.serverId, 'cluster-probe.heard', 'ada'] });
    // The answer names the server (`id`) and the event's id there (`number`).
    const invoked = /native-results: cluster invoke status=OK code= id=(\S+) number=(\d+) /.exec(await line(a!, 'native-results: cluster invoke '));
    t.is(invoked?.[1], b!.serverId);
    const heard = await line(b!, 'cluster-probe.heard ');
    t.regex(await line(a!, 'native-results: cluster send '), /native-results: cluster send status=OK code= id= number=1 /);
    t.regex(heard, /cluster-probe\.heard "hello" as /);
    t.true(Number(invoked![2]) > 0);
    t.false(a!.logs().some((l) => l.includes('cluster-probe.heard ')), 'the event ran on B only');
    await waitFor(() => told.length === 1, 5000, 'the message to ada');
    t.deepEqual(told, [{ n: 7 }]);
  } finally {
    await onA.close();
    await onB.close();
  }
});
