/**
 * A reload overlapping a resize and a second reload: every request gets a clear answer, and
 * afterwards /v1/status, the flag and what serves agree. New event threads load the plugins
 * from disk, so a resize while the files on disk are not the running version's is refused.
 */
import fs from 'node:fs';
import test from 'ava';
import { startSessionServer } from './_session.ts';
import { newPluginDir, writePlugin, PLUGIN, type Pong } from './_reload.ts';
import { client } from './_http.ts';
import { waitFor } from './_server.ts';

const slowWorkers = (dir: string, extra = ''): void => {
  const file = `${dir}/index.ts`;
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('register(api) {',
    `async register(api) {\n    if (api.thread === 'worker') { await new Promise((r) => setTimeout(r, 600)); ${extra} }`));
};

test.serial('a resize and a second reload asked while a reload loads: 200, 409, 200, and status, flag and code agree', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 }, RuntimeConfiguration: {} }, [dir]);
  const api = client(s.server.api.port);
  const c = await s.connect('json');
  try {
    writePlugin(dir, { version: '2.0.0' });
    slowWorkers(dir);
    const first = api.post('/v1/plugins/reload');
    // The reload is past its main-thread staging once /v1/plugins says it is... poll the 409.
    await waitFor(async () => (await api.post(`/v1/plugins/${PLUGIN}/reload?force=true`)).status === 409, 5000, 'the reload to run');
    const resize = api.put('/v1/configurations/event_threads_size/2');
    const second = await api.post('/v1/plugins/reload');
    t.deepEqual([second.status, (second.body as { error: string }).error], [409, 'GSF_ERR_RELOAD_RUNNING']);
    const pings = Array.from({ length: 50 }, (_, n) => c.request('ping', { n }) as Promise<Pong>);
    const [r1, r2] = await Promise.all([first, resize]);
    t.is(r1.status, 200, r1.text);
    t.deepEqual([r2.status, r2.body], [200, { event_threads_size: { result: 'event_threads_size set to 2\n' } }]);
    const got = await Promise.all(pings);
    t.deepEqual(got.map((p) => p.n), Array.from({ length: 50 }, (_, n) => n));
    t.deepEqual(got.map((p) => p.seq), Array.from({ length: 50 }, (_, n) => n + 1));
    const status = (await api.get('/v1/status')).body as { event_threads_size: number; plugins: unknown };
    const flag = (await api.get('/v1/configurations/event_threads_size')).body as { event_threads_size: { value: string } };
    t.deepEqual([status.event_threads_size, flag.event_threads_size.value, status.plugins], [2, '2', [{ name: PLUGIN, version: '2.0.0' }]]);
    t.is(s.server.dispatcher.size, 2);
    t.like(await c.request('ping', { n: 99 }) as Pong, { version: '2.0.0', seq: 51 });
  } finally {
    await c.close();
    await s.stop();
  }
});

const REFUSED = `event_threads_size stays 1, it could not be set to 2: plugin '${PLUGIN}': its files changed on disk since `
  + 'version 1.0.0 was loaded, and new event threads would load them: reload it first (POST /v1/plugins/reload), or put the loaded files back';

test.serial('a resize asked while a reload that fails loads: the reload 422, the resize 409 (the broken files are on disk)', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 }, RuntimeConfiguration: {} }, [dir]);
  const api = client(s.server.api.port);
  const c = await s.connect('json');
  try {
    writePlugin(dir, { version: '2.0.0' });
    slowWorkers(dir, "throw new Error('worker says no');");
    const first = api.post('/v1/plugins/reload');
    await waitFor(async () => (await api.post(`/v1/plugins/${PLUGIN}/reload?force=true`)).status === 409, 5000, 'the reload to run');
    const resize = api.put('/v1/configurations/event_threads_size/2');
    const [r1, r2] = await Promise.all([first, resize]);
    t.is(r1.status, 422, r1.text);
    t.deepEqual([r2.status, r2.body], [409, { error: 'GSF_ERR_CONFIG_NOT_APPLIED', message: REFUSED }]);
    const status = (await api.get('/v1/status')).body as { event_threads_size: number; plugins: unknown };
    t.deepEqual([status.event_threads_size, status.plugins], [1, [{ name: PLUGIN, version: '1.0.0' }]]);
    t.like(await c.request('ping', { n: 1 }) as Pong, { version: '1.0.0', seq: 1 });
  } finally {
    await c.close();
    await s.stop();
  }
});

test.serial('a resize after the plugin files were edited (not reloaded) is refused; after the reload it serves the new version', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 }, RuntimeConfiguration: {} }, [dir]);
  const api = client(s.server.api.port);
  const c = await s.connect('json');
  try {
    t.like(await c.request('ping', { n: 1 }) as Pong, { version: '1.0.0', label: 'label-1' });
    // An edit saved on disk, not reloaded: the running version is still 1.0.0.
    writePlugin(dir, { version: '2.0.0' }, 'label-2');
    const r = await api.put('/v1/configurations/event_threads_size/2');
    t.deepEqual([r.status, r.body], [409, { error: 'GSF_ERR_CONFIG_NOT_APPLIED', message: REFUSED }]);
    const status = (await api.get('/v1/status')).body as { event_threads_size: number; plugins: unknown };
    t.deepEqual([status.event_threads_size, status.plugins], [1, [{ name: PLUGIN, version: '1.0.0' }]]);
    t.like((await api.get(`/v1/plugins/${PLUGIN}`)).body as object, { version: '1.0.0', source_changed: true });
    // What answers is what /v1/status and /v1/plugins say runs.
    t.like(await c.request('ping', { n: 2 }) as Pong, { version: '1.0.0', label: 'label-1' });
    t.is((await api.post('/v1/plugins/reload')).status, 200);
    const again = await api.put('/v1/configurations/event_threads_size/2');
    t.deepEqual([again.status, again.body], [200, { event_threads_size: { result: 'event_threads_size set to 2\n' } }]);
    t.is(s.server.dispatcher.size, 2);
    t.like(await c.request('ping', { n: 3 }) as Pong, { version: '2.0.0', label: 'label-2' });
  } finally {
    await c.close();
    await s.stop();
  }
});

test.serial('a reload of one plugin while another one\'s files changed on disk is refused: its new threads would load both', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 } }, [dir, 'probe']);
  const api = client(s.server.api.port);
  const c = await s.connect('json');
  try {
    writePlugin(dir, { version: '2.0.0' }, 'label-2');
    const r = await api.post('/v1/plugins/probe/reload?force=true');
    t.is(r.status, 422, r.text);
    t.true((r.body as { message: string }).message.includes(REFUSED.slice(REFUSED.indexOf('plugin '))), r.text);
    t.like(await c.request('ping', { n: 1 }) as Pong, { version: '1.0.0', label: 'label-1' });
    const status = (await api.get('/v1/status')).body as { plugins: Array<{ name: string; version: string }> };
    t.deepEqual(status.plugins.find((p) => p.name === PLUGIN), { name: PLUGIN, version: '1.0.0' });
  } finally {
    await c.close();
    await s.stop();
  }
});
