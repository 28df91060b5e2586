/**
 * A reload asked before a stop began gets a clear answer (503 with a JSON error body), not a
 * connection closed under it: while the main thread stages the new version, or while the new
 * event threads load it.
 */
import fs from 'node:fs';
import test from 'ava';
import { startTestServer, waitFor } from './_server.ts';
import { newPluginDir, writePlugin } from './_reload.ts';
import { client, type Reply } from './_http.ts';

/**
 * Starts a server on version 1.0.0, saves a 2.0.0 whose `register` waits 1.5 s on `thread`,
 * asks for a reload, stops the server once the reload runs (a second one is refused with 409),
 * and returns the reload's answer, or the fetch error's text.
 */
async function reloadCutByStop(thread: 'main' | 'worker'): Promise<Reply | string> {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startTestServer({}, [dir]);
  const api = client(s.server.api.port);
  writePlugin(dir, {
    version: '2.0.0',
    module: `const slow = (ms: number) => new Promise((r) => setTimeout(r, ms));`,
    register: `    if (api.thread === '${thread}') await slow(1500);`,
  });
  // register must be async for the await.
  const file = `${dir}/index.ts`;
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('register(api) {', 'async register(api) {'));
  const pending = api.post('/v1/plugins/reload').catch((e: unknown) => `fetch failed: ${String((e as Error).cause ?? e)}`);
  await waitFor(async () => (await api.post('/v1/plugins/reload')).status === 409, 5000, 'the reload to be running');
  await s.stop();
  return pending;
}

test.serial('a reload whose main-thread register is still running when stop() begins is answered, not cut off', async (t) => {
  const answer = await reloadCutByStop('main');
  t.not(typeof answer, 'string', `the reload got no answer: ${String(answer)}`);
  const r = answer as Reply;
  t.deepEqual([r.status, r.body], [503, { error: 'GSF_ERR_UNAVAILABLE', message: 'the server stopped before this request was answered' }]);
});

test.serial('a reload whose new event threads are still loading when stop() begins is answered, not cut off', async (t) => {
  const answer = await reloadCutByStop('worker');
  t.not(typeof answer, 'string', `the reload got no answer: ${String(answer)}`);
  const r = answer as Reply;
  t.is(r.status, 503, r.text);
  t.like(r.body as object, { error: 'GSF_ERR_RELOAD_UNAVAILABLE' });
});
