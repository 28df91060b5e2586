/**
 * The operations console (arena's managed half) on two servers sharing Redis and PostgreSQL,
 * while Redis is down: a logout or a ban whose player's session cannot be looked up is answered
 * 503, not 204 for a kick that never happens, and a ban is not half made.
 */
import { testWithPostgres as test } from './_redis-test.ts';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GsfClient } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { startPostgres, type TestPostgres } from './_postgres.ts';
import { startGsf, startRedis, type GsfProcess, type TestRedis } from './_cluster.ts';

const ARENA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'arena');
let redis: TestRedis;
let postgres: TestPostgres;
let a: GsfProcess, b: GsfProcess;

test.before(async () => {
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  const database = await postgres.database('console_outage');
  const components = {
    Cluster: { redis_url: redis.url, heartbeat_interval_in_ms: 200, presence_ttl_in_ms: 5000, request_timeout_in_ms: 800 },
    ObjectStore: { database_url: database, max_event_reruns: 50 },
    DeployApiService: { deploy_api_service_use_managed: true },
  };
  a = await startGsf(components, [ARENA]);
  b = await startGsf(components, [ARENA]);
  for (const s of [a, b]) await waitFor(async () => (await s.json<{ servers: unknown[] }>('/v1/cluster/servers')).body.servers.length === 2, 10000, 'two servers');
});

test.after.always(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

async function player(s: GsfProcess, name: string): Promise<GsfClient> {
  const c = await s.connect();
  await c.request('hello', { name });
  return c;
}

test.serial('ForceLogout and BanUser while Redis is down: 503, the session stays and the ban is not made; both work once it is back', async (t) => {
  const linus = await player(b, 'linus');
  await redis.kill();
  try {
    await waitFor(() => a.logs().some((l) => l.includes('Cluster: lost Redis at')), 5000, "A's log line");
    const logout = await a.json<{ error: string; message: string }>('/cs-api/v1/account/linus/logout/', { method: 'POST' });
    t.is(logout.status, 503);
    t.is(logout.body.error, 'GSF_ERR_UNAVAILABLE');
    t.regex(logout.body.message, /^cannot look up linus's session: /);
    const ban = await a.json<{ error: string; message: string }>('/cs-api/v1/account/linus/ban/', { method: 'POST' });
    t.is(ban.status, 503);
    t.regex(ban.body.message, /^cannot look up linus's session: /);
  } finally {
    await redis.start();
  }
  await waitFor(async () => (await a.json('/v1/cluster/accounts/linus')).status === 200, 10000, 'presence registered again');
  t.deepEqual(await a.json('/cs-api/v1/account/linus/connection/'), { status: 200, body: true });
  t.deepEqual(await a.json('/cs-api/v1/account/linus/ban/'), { status: 200, body: false });
  t.true(linus.open);
  t.is((await a.api('/cs-api/v1/account/linus/logout/', { method: 'POST' })).status, 204);
  t.deepEqual(await linus.closed, { code: 4010, reason: 'logged out by an operator' });
});
