/**
 * Objects on PostgreSQL shared by two servers of a cluster, under faults (docs/guides/cluster.md:
 * a `'read'` fetch elsewhere may return the previous version only for the moment an
 * announcement travels):
 * - a commit whose COMMIT the database applied but whose answer was lost: the other server drops
 *   its copy all the same, and the request is told its changes may have been committed;
 * - a server paused past its presence TTL missed the announcements made meanwhile (they go to
 *   live servers): it drops its cached copies when it runs again.
 */
import path from 'node:path';
import pg from 'pg';
import { testWithPostgres as test } from './_redis-test.ts';
import { fixtures, waitFor } from './_server.ts';
import { postgresProxy, startPostgres, type TestPostgres } from './_postgres.ts';
import { startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';

const PLUGIN = path.join(fixtures, 'plugins', 'cluster-objects');

let postgres: TestPostgres;
let redis: TestRedis;

test.before(async () => {
  postgres = await startPostgres();
  redis = await startRedis();
});

test.after.always(async () => {
  await redis?.stop();
  await postgres?.stop();
});

type Item = { id: string; name: string; value: number } | null;
const post = (s: GsfProcess, p: string) => s.json<Record<string, unknown>>(p, { method: 'POST' });
const get = async (s: GsfProcess, name: string): Promise<Item> => (await s.json<{ item: Item }>(`/pc/get?name=${encodeURIComponent(name)}&mode=read`)).body.item;
const live = async (s: GsfProcess): Promise<number> => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length;

test.serial('a COMMIT applied whose answer was lost: the other server drops its copy, and the request is told the changes may stand', async (t) => {
  const url = await postgres.database(`gsf_cluster_objects_lost_${process.pid}`);
  const p = await postgresProxy(new URL(url));
  const via = new URL(url);
  via.port = String(p.port);
  const common = { Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 200, presence_ttl_in_ms: 5000 }, EventDispatcher: { event_threads_size: 1 } };
  const a = await startGsf({ ...common, ObjectStore: { database_url: via.href } }, [PLUGIN]);
  const b = await startGsf({ ...common, ObjectStore: { database_url: url } }, [PLUGIN]);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    for (const s of [a, b]) await waitFor(async () => (await live(s)) === 2, 10000, 'two servers');
    t.is((await post(a, '/pc/create?name=q&value=1')).status, 200);
    await waitFor(async () => (await get(b, 'q'))?.value === 1, 5000, 'B to cache q at 1');
    const answered = p.loseNextCommitAnswer();
    const failed = await post(a, '/pc/set?name=q&value=5');
    await answered;
    t.deepEqual(failed, { status: 500, body: { error: 'GSF_ERR_INTERNAL',
      message: 'internal error: its object changes may have been committed: the connection to the database was lost at COMMIT (read them again to know)' } });
    t.is((await db.query<{ n: string }>('SELECT count(*) AS n FROM "obj_PcItem"')).rows[0]!.n, '1');
    // The database applied it: both servers read it, B within the moment an announcement travels.
    t.is((await get(a, 'q'))?.value, 5);
    t.is(await waitFor(async () => ((await get(b, 'q'))?.value === 5 ? 5 : undefined), 5000, 'B to read 5'), 5);
    t.true(a.logs().some((l) => l.includes('GSF_ERR_OBJECT_STORE: object store: a commit failed: the connection was lost at COMMIT, so the changes may have been applied')));
  } finally {
    await db.end();
    await Promise.all([a.stop(), b.stop()]);
    p.close();
  }
});

test.serial('a server paused past its presence TTL drops its cached copies: it missed the announcements made meanwhile', async (t) => {
  const url = await postgres.database(`gsf_cluster_objects_paused_${process.pid}`);
  const args = {
    Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 100, presence_ttl_in_ms: 1000 },
    EventDispatcher: { event_threads_size: 1 },
    ObjectStore: { database_url: url },
  };
  const a = await startGsf(args, [PLUGIN]);
  const b = await startGsf(args, [PLUGIN]);
  try {
    for (const s of [a, b]) await waitFor(async () => (await live(s)) === 2, 10000, 'two servers');
    t.is((await post(a, '/pc/create?name=r&value=1')).status, 200);
    await waitFor(async () => (await get(b, 'r'))?.value === 1, 5000, 'B to cache r at 1');
    b.child.kill('SIGSTOP');
    try {
      await waitFor(async () => (await live(a)) === 1, 10000, 'B to leave presence');
      t.like(await post(a, '/pc/set?name=r&value=2'), { status: 200, body: { found: true } });
    } finally {
      b.child.kill('SIGCONT');
    }
    await waitFor(async () => (await live(a)) === 2 && b.logs().some((l) => l.includes('registering again')), 10000, 'B to register again');
    t.is((await get(b, 'r'))?.value, 2);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});
