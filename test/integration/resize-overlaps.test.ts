/**
 * `PUT /v1/configurations/event_threads_size/{n}` while the server is busy: a resize that fails
 * after another one succeeded names the size in effect, /v1/status reports the serving size
 * while a resize loads, and a resize does not wait for an earlier pool's awaiting events.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor, type Components, type TestServer } from './_server.ts';
import { client } from './_http.ts';

const PLUGIN = path.join(fixtures, 'plugins', 'probe-resize-load');

const start = (components: Components): Promise<TestServer> => startTestServer(components, [PLUGIN]);
const api = (s: TestServer): ReturnType<typeof client> => client(s.server.api.port);

/** Writes the plugin's environment for the threads the next server starts (see the fixture). */
function env(s: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

test.serial('a resize that fails after another one succeeded says the size that stays: the one in effect', async (t) => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'gsf-prl-'));
  const loads = path.join(dir, 'loads');
  // 2 threads load at start, 3 more for the first resize; every later thread fails to load.
  env({ PRL_LOADS: loads, PRL_FAIL_AFTER: '5' });
  const s = await start({ EventDispatcher: { event_threads_size: 2 } });
  try {
    const [grow, fail] = await Promise.all([api(s).put('/v1/configurations/event_threads_size/3'), api(s).put('/v1/configurations/event_threads_size/5')]);
    t.deepEqual([grow.status, grow.body], [200, { event_threads_size: { result: 'event_threads_size set to 3\n' } }]);
    t.is(fail.status, 409);
    const body = fail.body as { error: string; message: string };
    t.is(body.error, 'GSF_ERR_CONFIG_NOT_APPLIED');
    t.is(body.message.slice(0, body.message.indexOf(':')), 'event_threads_size stays 3, it could not be set to 5');
    t.is(((await api(s).get('/v1/status')).body as { event_threads_size: number }).event_threads_size, 3);
  } finally {
    env({ PRL_LOADS: undefined, PRL_FAIL_AFTER: undefined });
    await s.stop();
  }
});

test.serial('while a resize that will fail loads, /v1/status keeps the size that serves', async (t) => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'gsf-prl-'));
  const loads = path.join(dir, 'loads');
  env({ PRL_LOADS: loads, PRL_HANG_AFTER: '2' });
  const s = await start({ EventDispatcher: { event_threads_size: 2, plugin_reload_timeout_in_ms: 3000 } });
  try {
    const pending = api(s).put('/v1/configurations/event_threads_size/4');
    await waitFor(() => fs.readFileSync(loads, 'utf8').split('\n').filter(Boolean).length > 2, 5000, 'the new threads to start loading');
    const during = (await api(s).get('/v1/status')).body as { event_threads_size: number };
    const flag = (await api(s).get('/v1/configurations/event_threads_size')).body as { event_threads_size: { value: string } };
    const answer = await pending;
    t.is(answer.status, 409);
    t.deepEqual([during.event_threads_size, flag.event_threads_size.value], [2, '2']);
  } finally {
    env({ PRL_LOADS: undefined, PRL_HANG_AFTER: undefined });
    await s.stop();
  }
});

test.serial('a resize is answered while an event of an earlier pool still awaits', async (t) => {
  const s = await start({ EventDispatcher: { event_threads_size: 2, plugin_reload_timeout_in_ms: 3000, shutdown_drain_timeout_in_ms: 100 } });
  try {
    s.server.invoke('prl.hold', { ms: 25_000 });
    await waitFor(() => native.counterReadInt('engine', 'events_awaiting') === 1, 5000, 'the event to await');
    const first = await api(s).put('/v1/configurations/event_threads_size/3');
    t.is(first.status, 200);
    const second = await api(s).put('/v1/configurations/event_threads_size/1');
    // Answered while the event of two pools back still awaits, not once it has ended.
    t.is(native.counterReadInt('engine', 'events_awaiting'), 1);
    t.deepEqual([second.status, second.body], [200, { event_threads_size: { result: 'event_threads_size set to 1\n' } }]);
  } finally {
    await s.stop();
  }
});
