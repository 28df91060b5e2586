/**
 * A graceful stop with objects on PostgreSQL and with the Redis cluster (docs/decisions.md,
 * "Stopping"; docs/guides/cluster.md): a commit waiting on a lock held elsewhere does not hold
 * the stop, and its request gets the stop's 503; a commit made in the drain is announced to the
 * other servers, which drop their cached copies.
 */
import path from 'node:path';
import pg from 'pg';
import { testWithPostgres as test } from './_redis-test.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { startPostgres, type TestPostgres } from './_postgres.ts';
import { startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';

const PST = path.join(fixtures, 'plugins', 'probe-stoptraffic-objects');
const PSG = path.join(fixtures, 'plugins', 'probe-stoppg-cluster');

let postgres: TestPostgres;
let databases = 0;
const database = (): Promise<string> => postgres.database(`gsf_probe_stoppg_${process.pid}_${++databases}`);

test.before(async () => {
  postgres = await startPostgres();
});

test.after.always(async () => {
  await postgres?.stop();
});

const answer = async (p: Promise<Response>): Promise<string> => {
  const r = await p;
  return `${r.status} ${await r.text()}`;
};

/**
 * A server whose one commit waits on a table lock held by another connection when it is told
 * to stop (drain limit 300 ms): the stop ends, the lock still held; what the request was told.
 */
async function stopWithLockedCommit(): Promise<{ answer: string; logs: string[] }> {
  const url = await database();
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 300 }, ObjectStore: { database_url: url } }, [PST]);
  const base = `http://127.0.0.1:${s.server.api.port}`;
  await answer(fetch(`${base}/pst/order?name=first`, { method: 'POST' }));
  // Another connection holds the table so that inserts wait (reads still go through).
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE "obj_PstOrder" IN EXCLUSIVE MODE');
    const request = answer(fetch(`${base}/pst/order?name=blocked`, { method: 'POST' }));
    // The commit is in PostgreSQL, waiting for the lock.
    await waitFor(async () => (await locker.query<{ n: string }>("SELECT count(*) AS n FROM pg_locks WHERE NOT granted AND relation = '\"obj_PstOrder\"'::regclass")).rows[0]!.n !== '0',
      5000, 'the commit to wait on the lock');
    // The stop ends with the lock still held (it does not wait for the lock holder).
    await s.stop();
    return { answer: await request, logs: s.logs() };
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
    await s.stop();
  }
}

test.serial('PostgreSQL: a stop whose last commit waits on a lock held elsewhere ends without it, and the request gets 503', async (t) => {
  const r = await stopWithLockedCommit();
  t.true(r.logs.some((l) => l.includes('the object writer had not written every commit 300 ms into the stop')), r.logs.join('\n'));
  // Its event was still running at the drain limit: the stop's 503, as for every dropped request.
  t.is(r.answer, '503 {"error":"GSF_ERR_UNAVAILABLE","message":"the server stopped before the handler answered"}');
});

/** A `gsf start` process in a cluster on `redis`, with objects on `url` and drain limit `drain`. */
const CLUSTER_PG = (redis: TestRedis, url: string, drain: number): Promise<GsfProcess> => startGsf({
  Cluster: { redis_url: redis.url, cluster_name: `stoppg${databases}`, heartbeat_interval_in_ms: 250, presence_ttl_in_ms: 5000 },
  EventDispatcher: { event_threads_size: 2, shutdown_drain_timeout_in_ms: drain },
  ObjectStore: { database_url: url },
}, [PSG]);

test.serial('cluster: an object change committed in a server\'s stop drain reaches the other servers\' caches', async (t) => {
  const redis = await startRedis();
  const url = await database();
  const servers: GsfProcess[] = [];
  try {
    const a = await CLUSTER_PG(redis, url, 5000);
    servers.push(a);
    const b = await CLUSTER_PG(redis, url, 5000);
    servers.push(b);
    await waitFor(async () => (await b.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 2, 10000, 'both servers');
    t.deepEqual(await a.json('/psg/set?name=ada&value=1', { method: 'POST' }), { status: 200, body: { set: 1 } });
    // B reads (and caches) the version the object was created at.
    await waitFor(async () => (await b.json<{ value: number | null }>('/psg/get?name=ada')).body.value === 1, 5000, 'B to see 1');
    const version = async (): Promise<number> => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return Number((await c.query<{ version: string }>('SELECT version FROM "obj_PsgScore"')).rows[0]!.version);
      } finally {
        await c.end();
      }
    };
    const born = await version();
    // A sets 2 in an event that is still running when A is told to stop: it ends in the drain.
    const late = a.json('/psg/set?name=ada&value=2&ms=800', { method: 'POST' });
    await waitFor(() => a.logs().some((l) => l.includes('psg set ada blocking 800 ms')), 5000, 'the late set to run');
    t.is(await a.stop(), 0);
    t.deepEqual(await late, { status: 200, body: { set: 2 } });
    // The change is durable: a fresh read from PostgreSQL finds the next version...
    t.is(await version(), born + 1);
    // ...and B, which cached version 1, must not go on answering 1.
    await waitFor(async () => (await b.json<{ value: number | null }>('/psg/get?name=ada')).body.value === 2, 10000, 'B to see 2');
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await redis.stop();
  }
});
