/**
 * Hot reload of a managed plugin over the API service: the new code answers sessions that were
 * connected before, what `register` declared on the main thread is replaced, and the answers
 * of every route.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { GsfRequestError, ProtocolError } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { PLUGIN, get, newPluginDir, post, writePlugin, type Pong } from './_reload.ts';

test.serial('a session connected before the reload gets the new reply, new types are served and removed ones refused', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', register: `    api.sessions.onMessage('gone', (_b, msg) => msg.reply('still here'));` });
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('json');
  try {
    t.like(await c.request('ping', { n: 1 }) as Pong, { n: 1, seq: 1, version: '1.0.0', label: 'label-1' });
    t.is(await c.request('gone', {}), 'still here');
    const before = await get(s, '/v1/plugins/');
    t.is(before.status, 200);
    const listed = (before.body.plugins as Array<Record<string, unknown>>)[0]!;
    t.like(listed, { name: PLUGIN, kind: 'managed', version: '1.0.0', file: path.join(dir, 'index.ts'), source_changed: false, reloads: 0 });
    t.regex(listed.hash as string, /^[0-9a-f]{64}$/);
    // Nothing changed yet: nothing is reloaded.
    t.deepEqual((await post(s, '/v1/plugins/reload')).body.unchanged, [PLUGIN]);

    // The new version: another answer (also from the module it imports), a new type, 'gone' removed.
    writePlugin(dir, { version: '2.0.0', register: `    api.sessions.onMessage('added', (_b, msg) => msg.reply('new'));` }, 'label-2');
    t.true((await get(s, `/v1/plugins/${PLUGIN}`)).body.source_changed as boolean);
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    const item = (reloaded.body.reloaded as Array<Record<string, unknown>>)[0]!;
    t.like(item, { name: PLUGIN, kind: 'managed', version: '2.0.0', previous: { version: '1.0.0', hash: listed.hash }, reloads: 1 });
    t.not(item.hash, listed.hash);
    t.deepEqual(reloaded.body.unchanged, []);
    t.deepEqual(reloaded.body.warnings, []);
    t.true((reloaded.body.duration_ms as number) >= (reloaded.body.load_ms as number));

    // The same connection, no reconnect: the new code answers, and the counter carried on.
    t.like(await c.request('ping', { n: 2 }) as Pong, { n: 2, seq: 2, version: '2.0.0', label: 'label-2' });
    t.is(await c.request('added', {}), 'new');
    const gone = await c.request('gone', {}).catch((e: unknown) => e);
    t.true(gone instanceof GsfRequestError);
    t.is((gone as GsfRequestError).code, ProtocolError.unknownType);
    t.is(native.counterReadInt(PLUGIN, 'defined'), 7);
    const after = (await get(s, '/v1/plugins/')).body.plugins as Array<Record<string, unknown>>;
    t.like(after[0], { version: '2.0.0', hash: item.hash, source_changed: false, reloads: 1 });
    t.true(s.logs().some((l) => l.includes(`plugin reload: '${PLUGIN}' 1.0.0 -> 2.0.0`)));
    t.deepEqual((await get(s, '/v1/status')).body.plugins, [{ name: PLUGIN, version: '2.0.0' }]);
  } finally {
    await c.close();
    await s.stop();
  }
});

test.serial('a broken edit is refused with its error, and the old code keeps answering what is in flight', async (t) => {
  const dir = newPluginDir({
    version: '1.0.0',
    register: `    api.sessions.onMessage('thread', (_b, msg) => msg.reply(api.thread));`,
  });
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('msgpack');
  let n = 0;
  /** A burst of pings sent while a reload is refused: all answered by version 1, in order, once. */
  const burst = async (refusal: Promise<unknown>): Promise<void> => {
    const pending = Array.from({ length: 200 }, () => c.request('ping', { n: ++n }) as Promise<Pong>);
    await refusal;
    const replies = await Promise.all(pending);
    t.deepEqual(replies.map((r) => r.n), replies.map((_r, i) => n - 199 + i));
    t.deepEqual(replies.map((r) => r.seq), replies.map((r) => r.n));
    t.true(replies.every((r) => r.version === '1.0.0'));
  };
  try {
    const cases: Array<{ code: Parameters<typeof writePlugin>[1]; stage: string; cause?: string; message: RegExp }> = [
      {
        code: { version: '2.0.0', raw: `import { definePlugin } from 'gsf';\nexport default definePlugin({ name: '${PLUGIN}', version: '2.0.0', register(api) { api.sessions.onMessage('ping', (b, m) => m.reply(b) } });\n` },
        stage: 'load', cause: 'GSF_ERR_PLUGIN_LOAD', message: /^reload of plugin 'reloadable' refused, the running version keeps serving: plugin 'reloadable' load failed: cannot compile: .*index\.ts:2:\d+: ERROR: /,
      },
      {
        code: { version: '2.0.0', register: `    throw new Error('no config for 2.0.0');` },
        stage: 'register', cause: 'GSF_ERR_HANDLER_FAILED', message: /plugin 'reloadable' register failed: no config for 2\.0\.0$/,
      },
      {
        code: { version: '2.0.0', register: `    if (api.thread === 'worker') throw new Error('only event threads fail');` },
        stage: 'event threads', message: /plugin 'reloadable' register failed: only event threads fail$/,
      },
      {
        code: { version: '2.0.0', register: `    api.sessions.onMessage('ping', (_b, msg) => msg.reply('twice'));` },
        stage: 'register', cause: 'GSF_ERR_PLUGIN_DUPLICATE', message: /plugin 'reloadable' registers message type 'ping', already registered by plugin 'reloadable'$/,
      },
      {
        code: { version: '2.0.0', register: `    api.timers.every(10, 'no.such.event');` },
        stage: 'register', message: /timer event 'no\.such\.event': no plugin registers an event named 'no\.such\.event'$/,
      },
    ];
    for (const k of cases) {
      writePlugin(dir, k.code);
      const refusal = post(s, '/v1/plugins/reload');
      await burst(refusal);
      const { status, body } = await refusal;
      t.is(status, 422, JSON.stringify(body));
      t.is(body.error, 'GSF_ERR_RELOAD_FAILED');
      t.regex(body.message as string, k.message);
      t.deepEqual(body.plugins, [PLUGIN]);
      t.is(body.stage, k.stage);
      t.is(body.cause, k.cause);
      t.true(s.logs().some((l) => l.includes(`GSF_ERR_RELOAD_FAILED: ${body.message as string}`)), 'logged');
      t.like((await get(s, `/v1/plugins/${PLUGIN}`)).body, { version: '1.0.0', source_changed: true, reloads: 0 });
      t.is(await c.request('thread', {}), 'worker');
    }
    // Fixed: it goes in, and the main thread never kept a piece of a refused version.
    writePlugin(dir, { version: '3.0.0' });
    const ok = await post(s, '/v1/plugins/reload');
    t.is(ok.status, 200, JSON.stringify(ok.body));
    t.like(await c.request('ping', { n: ++n }) as Pong, { n, seq: n, version: '3.0.0' });
    t.is(native.counterValue('engine', 'events_unknown'), 0);
  } finally {
    await c.close();
    await s.stop();
  }
});

test.serial('the routes: 404 for an unknown plugin, 409 while a reload runs, force, and a bad force', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({}, [dir]);
  try {
    const missing = await post(s, '/v1/plugins/nope/reload');
    t.is(missing.status, 404);
    t.deepEqual(missing.body, { error: 'GSF_ERR_PLUGIN_NOT_FOUND', message: `no plugin named 'nope' (running: '${PLUGIN}')` });
    t.is((await get(s, '/v1/plugins/nope')).status, 404);
    const unchanged = await post(s, `/v1/plugins/${PLUGIN}/reload`);
    t.like(unchanged, { status: 200, body: { reloaded: [], unchanged: [PLUGIN] } });
    const bad = await post(s, `/v1/plugins/${PLUGIN}/reload?force=maybe`);
    t.deepEqual(bad, { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "force must be true or false, got 'maybe'" } });
    // An empty value (a script's unset variable), 1 or a second force reloads nothing.
    for (const query of ['force=', 'force=1', 'force=0']) {
      const refused = await post(s, `/v1/plugins/${PLUGIN}/reload?${query}`);
      t.deepEqual(refused, { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: `force must be true or false, got '${query.slice(6)}'` } });
    }
    t.deepEqual(await post(s, `/v1/plugins/${PLUGIN}/reload?force=false&force=true`),
      { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "query parameter 'force' must be given once, got 2 values" } });
    t.like(await get(s, `/v1/plugins/${PLUGIN}`), { status: 200, body: { reloads: 0 } });
    t.is((await post(s, '/v1/plugins/reload?force=true')).status, 400);
    // Two at once: the second is refused while the first runs, and the first goes through.
    const first = post(s, `/v1/plugins/${PLUGIN}/reload?force=true`);
    await waitFor(() => s.server.reloader!['running'] !== null, 5000, 'the first reload to start');
    const second = await post(s, `/v1/plugins/${PLUGIN}/reload?force=true`);
    t.deepEqual(second, {
      status: 409, body: { error: 'GSF_ERR_RELOAD_RUNNING', message: `a reload of '${PLUGIN}' is running; ask again when it has finished` },
    });
    const done = await first;
    t.is(done.status, 200);
    t.like(done.body, { reloaded: [{ name: PLUGIN, version: '1.0.0', reloads: 1 }], unchanged: [] });
    const listed = await fetch(`http://127.0.0.1:${s.server.api.port}/v1/plugins/reload`, { method: 'DELETE' });
    t.is(listed.status, 405);
    // Object declarations apply at start only.
    fs.mkdirSync(path.join(dir, 'objects'));
    fs.writeFileSync(path.join(dir, 'objects', 'types.json'), '{}');
    const objects = await post(s, '/v1/plugins/reload');
    t.is(objects.status, 422);
    t.like(objects.body, { plugins: [PLUGIN], stage: 'objects', cause: 'GSF_ERR_OBJECT_SCHEMA' });
    t.regex(objects.body.message as string, /its object declarations \(objects\/\*\.json\) changed, and they take effect at start only: restart the server to apply them$/);
    fs.rmSync(path.join(dir, 'objects'), { recursive: true });
    t.like(await post(s, '/v1/plugins/reload'), { status: 200, body: { reloaded: [], unchanged: [PLUGIN] } });
  } finally {
    await s.stop();
  }
  const stopped = await s.server.reloadPlugins().catch((e: unknown) => e);
  t.like(stopped, { code: 'GSF_ERR_RELOAD_UNAVAILABLE', status: 503 });
});

test.serial('an event whose handler the reload removed is dropped with a log line and a counter', async (t) => {
  // `hold` awaits until released, keeping its tag busy: the `doomed` events queued behind it
  // run only after the reload, when no thread has their handler any more.
  const dir = newPluginDir({
    version: '1.0.0',
    register: `
    api.event('hold', async () => {
      while ((api.counters.readInt('${PLUGIN}', 'release') ?? 0) === 0) await new Promise((r) => setTimeout(r, 5));
    });
    api.event('doomed', () => { api.counters.increase('${PLUGIN}', 'doomed_ran'); });
    api.event('kept', () => { api.counters.increase('${PLUGIN}', 'kept_old'); });`,
  });
  const s = await startSessionServer({}, [dir]);
  try {
    const tag = 4242;
    s.server.invoke('hold', undefined, { tag });
    for (let i = 0; i < 3; i++) s.server.invoke('doomed', undefined, { tag });
    for (let i = 0; i < 2; i++) s.server.invoke('kept', undefined, { tag });
    writePlugin(dir, {
      version: '2.0.0',
      register: `
    api.event('kept', () => { api.counters.increase('${PLUGIN}', 'kept_new'); });`,
    });
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.throws(() => s.server.invoke('doomed'), { message: "no plugin registers an event named 'doomed'" });
    native.counterUpdate(PLUGIN, 'release', 1, false);
    await waitFor(() => native.counterReadInt(PLUGIN, 'kept_new') === 2, 10000, 'the kept events');
    t.is(native.counterValue('engine', 'events_unknown'), 3);
    t.is(native.counterReadInt(PLUGIN, 'doomed_ran'), null);
    t.is(native.counterReadInt(PLUGIN, 'kept_old'), null, 'queued events of a kept handler run the new code');
    const lines = s.logs().filter((l) => l.includes('GSF_ERR_UNKNOWN_EVENT: event_name=doomed'));
    t.is(lines.length, 3);
    t.regex(lines[0]!, /no handler 'doomed' on this event thread; the event is dropped/);
  } finally {
    await s.stop();
  }
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  // The stopped server starts no event thread again (its pools are ended for good), so none
  // fails to load the plugins that are gone.
  const seen = s.logs().length;
  await new Promise((r) => setTimeout(r, 3000));
  t.deepEqual(s.logs().slice(seen).filter((l) => l.includes('event worker error')), []);
});
