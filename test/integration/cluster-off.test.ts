/**
 * Without the Cluster component nothing of it runs: no Redis client is loaded, `?cluster=true`
 * is refused before anything changes, `/v1/cluster/…` does not exist, and `api.cluster`
 * answers for this one server.
 */
import test from 'ava';
import { createRequire } from 'node:module';
import { startSessionServer, apiUrl, type SessionServer } from './_session.ts';

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({}, ['session-probe', 'cluster-probe']);
});

test.after.always(() => s?.stop());

const json = async (path: string, init?: RequestInit): Promise<{ status: number; body: unknown }> => {
  const r = await fetch(apiUrl(s) + path, init);
  return { status: r.status, body: await r.json() };
};

test.serial('no Redis client is loaded and no cluster route exists', async (t) => {
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/ioredis/'));
  t.deepEqual(loaded, []);
  t.deepEqual(await json('/v1/cluster/servers'), { status: 404, body: { error: 'GSF_ERR_NOT_FOUND', message: 'no route for GET /v1/cluster/servers' } });
});

test.serial('cluster=true is refused with 409 and changes nothing', async (t) => {
  const off = { error: 'GSF_ERR_CLUSTER_OFF', message: 'cluster=true needs the Cluster component; this server runs alone' };
  t.deepEqual(await json('/v1/configurations/v/2?cluster=true', { method: 'PUT' }), { status: 409, body: off });
  t.deepEqual(await json('/v1/configurations/v'), { status: 200, body: { v: { type: 'int32', desc: 'Log verbosity: verbose lines up to this level are written', value: '0' } } });
  const record = { date_start: '2030/01/01 00:00', date_end: '2030/01/01 01:00', messages: 'x', under_maintenance: true };
  t.deepEqual(await json('/v1/maintenance/update?cluster=true', { method: 'PUT', body: JSON.stringify(record) }), { status: 409, body: off });
  t.like(await json('/v1/maintenance'), { status: 200, body: { under_maintenance: false } });
  t.deepEqual(await json('/v1/configurations/compatible_client_versions?cluster=true', { method: 'POST', body: '["2.0.0"]' }), { status: 409, body: off });
  t.like(await json('/v1/configurations/v/2?cluster=false', { method: 'PUT' }), { status: 200 });
  t.deepEqual(await json('/v1/configurations/v/3?cluster=false&cluster=true', { method: 'PUT' }),
    { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "query parameter 'cluster' must be given once, got 2 values" } });
  t.like(await json('/v1/configurations/v'), { status: 200, body: { v: { value: '2' } } });
  await json('/v1/configurations/v/0', { method: 'PUT' });
});

test.serial('api.cluster answers for this one server', async (t) => {
  const c = await s.connect();
  const me = await c.request<{ sessionId: number; server: string | null }>('c.where');
  t.is(me.server, null);
  t.deepEqual(await c.request('c.servers'), []);
  t.deepEqual(await c.request('c.remote', { server: 'elsewhere:1', to: me.sessionId, text: 'x' }), { ok: false, error: "no live server 'elsewhere:1' in the cluster" });
  t.like(await c.request('login', { account: 'solo' }), { ok: true });
  const told: unknown[] = [];
  c.on('told', (b) => told.push(b));
  // The message is written before the answer, on the same session: it is there when the answer is.
  t.true(await c.request('c.tell', { account: 'solo', body: 'to myself' }));
  t.deepEqual(told, ['to myself']);
  t.false(await c.request('c.tell', { account: 'nobody', body: 'x' }));
  t.deepEqual(told, ['to myself']);
  await c.close();
});
