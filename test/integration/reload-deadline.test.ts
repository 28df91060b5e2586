/**
 * The reload deadline (EventDispatcher.plugin_reload_timeout_in_ms): a new version whose async
 * `register` never finishes, on the main thread or on the new event threads, is refused once
 * the deadline passes, the running version serves on, and later reloads and resizes work. A
 * resize that cannot take effect answers an error and keeps the old value.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer, apiUrl, type SessionServer } from './_session.ts';
import { PLUGIN, get, newPluginDir, post, writePlugin, type Answer, type Pong } from './_reload.ts';

// Long enough for the main thread to stage the small plugin on a busy machine, short for a test.
const TIMEOUT_MS = 1000;

/** The plugin, whose `register` hangs where the file `hang` next to it says: "workers", "everywhere" or nowhere. */
function hangingPlugin(version: string): string {
  return `import fs from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { definePlugin } from 'gsf';

const marker = path.join(import.meta.dirname, '..', 'hang');

export default definePlugin({
  name: '${PLUGIN}',
  version: '${version}',
  async register(api) {
    const hang = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '';
    if (hang === 'everywhere' || (hang === 'workers' && !isMainThread)) await new Promise(() => undefined);
    api.sessions.onMessage('ping', (_body, msg) => msg.reply({ version: '${version}' }));
  },
});
`;
}

async function put(s: SessionServer, route: string): Promise<Answer> {
  const res = await fetch(`${apiUrl(s)}${route}`, { method: 'PUT' });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

/** Threads of the pool that serves now (not the size asked for). */
function poolThreads(s: SessionServer): number {
  return (s.server.dispatcher as unknown as { pool: { threads: unknown[] } }).pool.threads.length;
}

test.serial('a register that never finishes is refused at the deadline; the old version serves, later reloads and resizes work', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', raw: hangingPlugin('1.0.0') });
  const marker = path.join(path.dirname(dir), 'hang');
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 2, plugin_reload_timeout_in_ms: TIMEOUT_MS } }, [dir]);
  const c = await s.connect('json');
  try {
    t.like(await c.request('ping', {}) as Pong, { version: '1.0.0' });

    // Hangs on the new event threads only: the main thread staged it, the workers never load.
    fs.writeFileSync(marker, 'workers');
    writePlugin(dir, { version: '2.0.0', raw: hangingPlugin('2.0.0') });
    const reload = post(s, '/v1/plugins/reload');
    // A resize asked for meanwhile waits behind the reload; its own threads would load the
    // hanging code on disk, not the running version: it is refused, and the size stays 2.
    const resize = put(s, '/v1/configurations/event_threads_size/3/');
    const refused = await reload;
    t.is(refused.status, 422, JSON.stringify(refused.body));
    t.deepEqual(refused.body, {
      error: 'GSF_ERR_RELOAD_TIMEOUT',
      message: `reload of plugin '${PLUGIN}' refused, the running version keeps serving: not serving within ${TIMEOUT_MS} ms `
        + '(EventDispatcher.plugin_reload_timeout_in_ms): the new event threads had not all loaded it (a register that never finishes?)',
      plugins: [PLUGIN], stage: 'event threads', timeout_ms: TIMEOUT_MS,
    });
    t.like(await c.request('ping', {}) as Pong, { version: '1.0.0' });
    const notApplied = await resize;
    t.is(notApplied.status, 409, JSON.stringify(notApplied.body));
    t.is(notApplied.body.error, 'GSF_ERR_CONFIG_NOT_APPLIED');
    t.is(notApplied.body.message, `event_threads_size stays 2, it could not be set to 3: plugin '${PLUGIN}': its files changed on disk `
      + 'since version 1.0.0 was loaded, and new event threads would load them: reload it first (POST /v1/plugins/reload), or put the loaded files back');
    t.is((await get(s, '/v1/status')).body.event_threads_size, 2);
    t.like((await get(s, '/v1/configurations/event_threads_size')).body, { event_threads_size: { value: '2' } });
    t.is(poolThreads(s), 2);

    // Hangs on the main thread, where it is staged first.
    fs.writeFileSync(marker, 'everywhere');
    writePlugin(dir, { version: '3.0.0', raw: hangingPlugin('3.0.0') });
    const staged = await post(s, '/v1/plugins/reload');
    t.is(staged.status, 422, JSON.stringify(staged.body));
    t.like(staged.body, { error: 'GSF_ERR_RELOAD_TIMEOUT', plugins: [PLUGIN], stage: 'register', timeout_ms: TIMEOUT_MS });
    t.regex(staged.body.message as string, new RegExp(`: plugin '${PLUGIN}' had not finished loading and registering on the main thread$`));
    t.true(s.logs().some((l) => l.includes('GSF_ERR_RELOAD_TIMEOUT') && l.includes('on the main thread')));
    t.like(await c.request('ping', {}) as Pong, { version: '1.0.0' });

    // Fixed: the next reload and resize go through (nothing holds them any more), with a
    // deadline that loading on a busy machine cannot miss.
    fs.rmSync(marker);
    s.server.thread.flags.set('plugin_reload_timeout_in_ms', 600_000);
    writePlugin(dir, { version: '4.0.0', raw: hangingPlugin('4.0.0') });
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.like(await c.request('ping', {}) as Pong, { version: '4.0.0' });
    const resized = await put(s, '/v1/configurations/event_threads_size/3/');
    t.is(resized.status, 200, JSON.stringify(resized.body));
    t.is((await get(s, '/v1/status')).body.event_threads_size, 3);
    t.is(poolThreads(s), 3);
    t.like(await c.request('ping', {}) as Pong, { version: '4.0.0' });
  } finally {
    await c.close();
    await s.stop();
  }
});
