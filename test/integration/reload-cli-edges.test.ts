/**
 * Hot reload and `gsf start` at their edges: a plugin reached through a symbolic link, a
 * refusal found only at the switch, a new version's onStart hook that never settles, a save
 * while a reload loads, `--watch` racing another reload or stopped while one runs, a folder
 * deleted and written again, objects/ beside a single file, and SIGHUP while the server starts
 * or drains.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSessionServer, apiUrl } from './_session.ts';
import { PLUGIN, get, newPluginDir, pluginCode, post, writePlugin, type Pong } from './_reload.ts';
import { GsfRequestError, ProtocolError } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { watchPlugins } from '../../src/plugins/reload-watch.ts';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';


const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `gsf start` as a process, with the plugin `dir`, one event thread and the API on port 0; `out()` is what it wrote so far. */
function spawnGsf(dir: string) {
  const manifest = path.join(path.dirname(dir), 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({ components: [
    { name: 'ApiService', arguments: { api_service_port: 0 } },
    { name: 'EventDispatcher', arguments: { event_threads_size: 1 } },
  ], plugins: [dir] }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d: Buffer) => { text += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { text += d.toString(); });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, out: () => text, exited };
}

/**
 * Version 2 of the test plugin, whose register holds (on the main thread, where a reload stages
 * it first) while `marker` exists; it logs 'version 2 register: holding' when it starts to.
 */
function writeHoldingVersion2(dir: string, marker: string): void {
  fs.writeFileSync(marker, '');
  writePlugin(dir, {
    version: '2.0.0',
    module: `import fs from 'node:fs';`,
    register: `    if (fs.existsSync(${JSON.stringify(marker)})) api.log.info('version 2 register: holding');
    return (async () => { while (fs.existsSync(${JSON.stringify(marker)})) await new Promise((r) => setTimeout(r, 5)); })();`,
  });
}

{
/**
 * A plugin listed through a symbolic link (a plugins/ folder of links into a game's repository,
 * `npm link`): a reload must load the new code on the main thread too, not the cached old one.
 */
test.serial('a plugin whose folder is reached through a symlink reloads its new code on the main thread as well', async (t) => {
  const real = newPluginDir({ version: '1.0.0' });
  const link = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-reload-link-')), PLUGIN);
  fs.symlinkSync(real, link, 'dir');
  const s = await startSessionServer({}, [link]);
  const c = await s.connect('json');
  try {
    t.like(await c.request('ping', { n: 1 }) as Pong, { version: '1.0.0', seq: 1 });
    writePlugin(real, { version: '2.0.0', register: `    api.sessions.onMessage('added', (_b, msg) => msg.reply('new'));` }, 'label-2');
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.like((reloaded.body.reloaded as Array<Record<string, unknown>>)[0], { name: PLUGIN, version: '2.0.0', previous: { version: '1.0.0' } });
    t.like((await get(s, `/v1/plugins/${PLUGIN}`)).body, { version: '2.0.0', reloads: 1 });
    t.deepEqual((await get(s, '/v1/status')).body.plugins, [{ name: PLUGIN, version: '2.0.0' }]);
    t.like(await c.request('ping', { n: 2 }) as Pong, { version: '2.0.0', seq: 2, label: 'label-2' });
    t.is(await c.request('added', {}).catch((e: unknown) => String(e)), 'new');
  } finally {
    await c.close();
    await s.stop();
  }
});
}

{
/**
 * A new version whose `register` declares something that only fails when the switch applies it
 * (a counter whose initial value is not a number): the reload must be refused before the
 * switch, with the old version serving on everywhere, not answered 422 after the new event
 * threads already took over.
 */
test.serial('a reload refused with 422 leaves the old version serving on the event threads too', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('json');
  try {
    t.like(await c.request('ping', { n: 1 }) as Pong, { version: '1.0.0', seq: 1 });
    // A plain-JavaScript mistake (a string where a number goes), accepted by `register`.
    writePlugin(dir, {
      version: '2.0.0',
      register: `    api.counters.define('${PLUGIN}', 'lives', 'Lives left', '3' as unknown as number);
    api.sessions.onMessage('added', (_b, msg) => msg.reply('new'));`,
    });
    const answer = await post(s, '/v1/plugins/reload');
    t.is(answer.status, 422, JSON.stringify(answer.body));
    t.is(answer.body.error, 'GSF_ERR_RELOAD_FAILED');
    t.deepEqual(answer.body.plugins, [PLUGIN]);
    t.like((await get(s, `/v1/plugins/${PLUGIN}`)).body, { version: '1.0.0', reloads: 0, source_changed: true });
    // Refused: the old version answers, and the new version's message type does not exist.
    t.like(await c.request('ping', { n: 2 }) as Pong, { version: '1.0.0', seq: 2 });
    const added = await c.request('added', {}).catch((e: unknown) => e);
    t.true(added instanceof GsfRequestError, String(added));
    t.is((added as GsfRequestError).code, ProtocolError.unknownType);
  } finally {
    await c.close();
    await s.stop();
  }
});
}

{
/**
 * The new version's `onStart` hook that never resolves: the reload must still answer, and it
 * must not hold every later reload (409) until a restart (the deadline's purpose,
 * docs/guides/hot-reload.md "The deadline").
 */
const TIMEOUT_MS = 3000;

test.serial('an onStart hook of the new version that never resolves does not hold the reload, nor every later one', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({ EventDispatcher: { plugin_reload_timeout_in_ms: TIMEOUT_MS } }, [dir]);
  const c = await s.connect('json');
  const pending = new AbortController();
  try {
    writePlugin(dir, { version: '2.0.0', register: '    api.onStart(() => new Promise(() => undefined));' });
    let first: number | null = null;
    // The switch happens: version 2 answers. (On a busy machine the new threads may load slower
    // than this test's short deadline: that reload is refused before the switch, with
    // GSF_ERR_RELOAD_TIMEOUT at stage `event threads`, and is tried again.)
    for (let attempt = 0; ; attempt++) {
      let refused = false;
      first = null;
      void fetch(`${apiUrl(s)}/v1/plugins/reload`, { method: 'POST', signal: pending.signal })
        .then(async (res) => {
          const body = await res.json() as { error?: string; stage?: string };
          refused = body.error === 'GSF_ERR_RELOAD_TIMEOUT' && body.stage === 'event threads';
          first = res.status;
        }, () => undefined);
      const served = await waitFor(async () => (
        ((await c.request('ping', { n: 0 })) as Pong).version === '2.0.0' ? 'v2' : refused ? 'refused' : null
      ), 30000, 'version 2 to answer');
      if (served === 'v2') break;
      if (attempt === 9) throw new Error('every reload timed out before the switch');
    }
    // The reload answers once its deadline has passed at the latest...
    await waitFor(() => first, 5 * TIMEOUT_MS, 'the first reload to answer').catch(() => undefined);
    // ...and the next reload is taken, not refused with 409 forever. (On a busy machine its new
    // threads may load slower than this test's short deadline: that 422 is tried again.)
    writePlugin(dir, { version: '3.0.0' });
    let next = await post(s, '/v1/plugins/reload');
    for (let i = 0; i < 10 && (next.body as { error?: string }).error === 'GSF_ERR_RELOAD_TIMEOUT'; i++) next = await post(s, '/v1/plugins/reload');
    t.is(next.status, 200, JSON.stringify(next.body));
    t.like(await c.request('ping', { n: 1 }) as Pong, { version: '3.0.0' });
    t.not(first, null, 'the first reload never answered');
  } finally {
    pending.abort();
    await c.close();
    await s.stop();
  }
});
}

{
/**
 * A save that lands while a reload is loading (an editor saving again, a build still writing):
 * the main thread and the new event threads must switch to one and the same version, the one
 * the answer reports, never the main thread on one save and the event threads on the next.
 */
test.serial('a file saved while a reload loads does not leave the event threads on another version than the one reported', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const marker = path.join(path.dirname(dir), 'hold');
  const s = await startSessionServer({ EventDispatcher: { plugin_reload_timeout_in_ms: 60000 } }, [dir]);
  const c = await s.connect('json');
  try {
    writeHoldingVersion2(dir, marker);
    const reload = s.server.reloadPlugins([PLUGIN]);
    await waitFor(() => s.logs().some((l) => l.includes('version 2 register: holding')), 30000, 'version 2 to be staged');
    // Saved again before the reload finished.
    writePlugin(dir, { version: '3.0.0', register: `    api.sessions.onMessage('added', (_b, msg) => msg.reply('new'));` });
    fs.rmSync(marker);
    // Whatever the reload decides (2, 3, or a refusal), every thread serves the version it reports.
    const outcome = await reload.then((o) => o.reloaded[0]?.version ?? 'unchanged', (e: unknown) => `refused: ${String(e)}`);
    const reported = s.server.reloader!.list()[0]!.version;
    const serving = (await c.request('ping', { n: 1 }) as Pong).version;
    const added = await c.request('added', {}).then(() => 'served', (e: unknown) =>
      (e instanceof GsfRequestError && e.code === ProtocolError.unknownType ? 'unknown type' : String(e)));
    t.deepEqual({ serving, added }, { serving: reported, added: reported === '3.0.0' ? 'served' : 'unknown type' }, `reload: ${outcome}`);
  } finally {
    await c.close();
    await s.stop();
  }
});
}

{
/**
 * `--watch` (docs/guides/hot-reload.md, Decisions): every changed plugin is reloaded once edits
 * have been quiet. A save that lands while another reload runs (a POST, a SIGHUP) must still
 * be applied once that reload has finished, not dropped on its 409.
 */
test.serial('a save made while another reload runs is reloaded by --watch once that reload has finished', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const marker = path.join(path.dirname(dir), 'hold');
  const s = await startSessionServer({ EventDispatcher: { plugin_reload_timeout_in_ms: 60000 } }, [dir]);
  const c = await s.connect('json');
  const stopWatching = watchPlugins(s.server, s.server.thread.log, 50);
  const version = async (): Promise<string> => ((await c.request('ping', { n: 0 })) as Pong).version;
  try {
    writeHoldingVersion2(dir, marker);
    // A reload by hand (a POST, a SIGHUP), begun before the watcher's: it hashes the files at once.
    const byHand = s.server.reloadPlugins([PLUGIN]);
    byHand.catch(() => undefined); // looked at below
    await waitFor(() => s.logs().some((l) => l.includes('version 2 register: holding')), 30000, 'version 2 to be staged');
    // Meanwhile the developer saves version 3: the watcher's reload meets the running one (409).
    writePlugin(dir, { version: '3.0.0', register: `    api.sessions.onMessage('added', (_b, msg) => msg.reply('new'));` });
    const met = (): number => s.logs().filter((l) => l.includes(`file change: a reload of '${PLUGIN}' is running`)).length;
    const before = met();
    await waitFor(() => met() > before, 30000,
      'the watcher to meet the running reload');
    fs.rmSync(marker);
    // The reload by hand staged version 2, but its new event threads would read version 3 from
    // disk: it is refused before its switch, and the watcher's next turn takes version 3.
    const refused = await byHand.then(() => null, (err: unknown) => err as { code?: string; message?: string });
    t.is(refused?.code, 'GSF_ERR_RELOAD_FAILED');
    t.regex(refused?.message ?? '', /its files changed while the reload loaded them; reload again/);
    // The last save is what serves everywhere once the watcher has had its turn after that reload.
    await waitFor(() => s.server.reloader!.list()[0]!.version === '3.0.0', 5000, 'version 3 to be loaded').catch(() => undefined);
    t.like(s.server.reloader!.list()[0], { version: '3.0.0', source_changed: false });
    t.is(await c.request('added', {}).catch((e: unknown) => String(e)), 'new');
    t.is(await version(), '3.0.0');
  } finally {
    stopWatching();
    await c.close();
    await s.stop();
  }
});
}

{
/**
 * The server's stop stops the watch first (`gsf start --watch`). A save that landed while the
 * watcher's reload ran was to be reloaded right after it; once the watch is stopped, it is not,
 * or a SIGTERM would start a reload during the stop's drain.
 */
test.serial('a save waiting for the running reload is not reloaded once --watch has stopped', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const marker = path.join(path.dirname(dir), 'hold');
  const s = await startSessionServer({ EventDispatcher: { plugin_reload_timeout_in_ms: 60000 } }, [dir]);
  const debounce = 20;
  const stopWatching = watchPlugins(s.server, s.server.thread.log, debounce);
  const starts = (): number => s.logs().filter((l) => l.includes('file change: reloading every plugin whose source changed')).length;
  const seen = fs.watch(dir, { recursive: true });
  try {
    writeHoldingVersion2(dir, marker);
    await waitFor(() => s.logs().some((l) => l.includes('version 2 register: holding')), 30000, 'version 2 to be staged');
    t.is(starts(), 1);
    // Version 3 is saved while version 2 loads: the watcher sees it (as this test's own watch
    // does) and keeps it for after the running reload.
    const saved = new Promise((resolve) => seen.once('change', resolve));
    writePlugin(dir, { version: '3.0.0' });
    await saved;
    await new Promise((r) => setTimeout(r, debounce * 10));
    stopWatching();
    fs.rmSync(marker);
    // Version 2's reload ends (refused: its files changed meanwhile); nothing starts after it.
    await waitFor(() => s.logs().some((l) => l.includes('GSF_ERR_RELOAD_FAILED')), 30000, 'the running reload to end');
    await new Promise((r) => setTimeout(r, debounce * 10));
    t.is(starts(), 1, s.logs().filter((l) => /reload|file change/.test(l)).join('\n'));
    t.like(s.server.reloader!.list()[0], { version: '1.0.0', source_changed: true });
  } finally {
    seen.close();
    stopWatching();
    await s.stop();
  }
});
}

{
/**
 * `gsf start` as a process: SIGHUP is a reload (docs/guides/hot-reload.md), and a reload asked
 * for while the server stops is refused (503 GSF_ERR_RELOAD_UNAVAILABLE). A SIGHUP that comes
 * while the server drains must not kill it.
 */
test.serial('a SIGHUP while gsf start drains after SIGTERM does not kill it: it still stops cleanly with exit 0', async (t) => {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-hup-')), 'release');
  // onStop waits for the test to create `release`: the stop is in progress until then.
  const dir = newPluginDir({
    version: '1.0.0',
    raw: `import fs from 'node:fs';
import os from 'node:os';
import { definePlugin } from 'gsf';
export default definePlugin({
  name: 'reloadable', version: '1.0.0',
  register(api) {
    api.onStop(async () => {
      api.log.info('onStop: waiting for release');
      while (!fs.existsSync(${JSON.stringify(marker)})) await new Promise((r) => setTimeout(r, 10));
    });
  },
});
`,
  });
  const { child, out, exited } = spawnGsf(dir);
  try {
    await waitFor(() => out().includes('listening api='), 60000, 'the listening line');
    child.kill('SIGTERM');
    await waitFor(() => out().includes('onStop: waiting for release'), 30000, 'the stop to begin');
    child.kill('SIGHUP');
    // The signal is handled (or ignored) by now if the process still runs; then the stop finishes.
    await waitFor(() => child.exitCode !== null || child.signalCode !== null || out().includes('SIGHUP'), 5000, 'the SIGHUP to land').catch(() => undefined);
    fs.writeFileSync(marker, '');
  } finally {
    fs.writeFileSync(marker, '');
  }
  t.deepEqual(await exited, { code: 0, signal: null }, out());
  t.regex(out(), /\] stopped/);
});
}

/**
 * A SIGHUP that reaches `gsf start` while it is still starting (its plugins registering; a
 * script sending it right after a restart) does not end the process: the server comes up, then
 * runs the reload asked for (of unchanged files here, so it reloads nothing).
 */
test('a SIGHUP while gsf start is still starting is kept: the server comes up, then reloads', async (t) => {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-hup-start-')), 'hold');
  fs.writeFileSync(marker, '');
  const dir = newPluginDir({
    version: '1.0.0',
    module: `import fs from 'node:fs';
import os from 'node:os';\nimport { isMainThread } from 'node:worker_threads';`,
    register: `    if (isMainThread && fs.existsSync(${JSON.stringify(marker)})) {
      api.log.info('register: holding the start');
      return (async () => { while (fs.existsSync(${JSON.stringify(marker)})) await new Promise((r) => setTimeout(r, 5)); })();
    }`,
  });
  const { child, out, exited } = spawnGsf(dir);
  try {
    await waitFor(() => out().includes('register: holding the start'), 60000, 'the start to reach register');
    child.kill('SIGHUP');
    fs.rmSync(marker);
    const first = await waitFor(() => (child.exitCode !== null || child.signalCode !== null ? 'exited'
      : out().includes('listening api=') ? 'listening' : null), 60000, 'the start to finish');
    t.is(first, 'listening', `exit ${String(child.exitCode)} signal ${String(child.signalCode)}\n${out()}`);
    await waitFor(() => out().includes('SIGHUP during the start: reloading the plugins now'), 60000, 'the reload line');
    child.kill('SIGTERM');
    t.deepEqual(await exited, { code: 0, signal: null }, out());
  } finally {
    fs.rmSync(marker, { force: true });
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

/**
 * A plugin folder deleted and written again (a clean build of a plugin generated into its
 * folder, `rm -rf plugins/x && cp -r …`, a sync tool) stays watched: its parent sees it return.
 */
test.serial('a plugin folder deleted and written again (a clean build of the plugin) is still watched', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('json');
  const stop = watchPlugins(s.server, s.server.thread.log, 50);
  try {
    t.like(await c.request('ping', { n: 1 }) as Pong, { version: '1.0.0' });
    fs.rmSync(dir, { recursive: true });
    // The watcher sees the folder go (a refusal: its files cannot be read), then the build writes it again.
    await waitFor(() => s.logs().some((l) => l.includes('GSF_ERR_RELOAD_FAILED')), 20000, 'the refusal of the deleted folder');
    writePlugin(dir, { version: '2.0.0' });
    const version = async () => ((await c.request('ping', { n: 2 })) as Pong).version;
    await waitFor(async () => (await version()) === '2.0.0', 20000, 'version 2').catch(() => undefined);
    t.is(await version(), '2.0.0', s.logs().filter((l) => /reload|file change/.test(l)).join('\n'));
    t.like(s.server.reloader!.list()[0], { name: PLUGIN, version: '2.0.0', source_changed: false });
  } finally {
    stop();
    await c.close();
    await s.stop();
  }
});

test.serial('an edit of objects/*.json beside a single-file plugin is seen by --watch and refused with stage objects', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-watch-single-'));
  const file = path.join(dir, 'reloadable.ts');
  fs.writeFileSync(path.join(dir, 'label.ts'), "export function label(): string {\n  return 'label-1';\n}\n");
  fs.writeFileSync(file, pluginCode({ version: '1.0.0' }));
  const s = await startSessionServer({}, [file]);
  const stop = watchPlugins(s.server, s.server.thread.log, 50);
  try {
    t.like(s.server.reloader!.list()[0], { name: 'reloadable', source_changed: false });
    // The same change reload.test.ts makes to a folder plugin: declarations appear beside the file.
    fs.mkdirSync(path.join(dir, 'objects'));
    fs.writeFileSync(path.join(dir, 'objects', 'types.json'), '{}');
    // A reload sees it, and --watch starts one.
    t.like(s.server.reloader!.list()[0], { source_changed: true });
    const refusal = () => s.logs().find((l) => l.includes('GSF_ERR_RELOAD_FAILED') && l.includes('object declarations'));
    await waitFor(refusal, 15000, 'the watcher to report the refusal').catch(() => undefined);
    t.truthy(refusal(), `no refusal logged:\n${s.logs().join('\n')}`);
  } finally {
    stop();
    await s.stop();
  }
});
