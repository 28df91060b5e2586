/**
 * Files linked into a plugin's folder (a module shared between plugins, as monorepos link
 * them) are files of the plugin: an edit of one is a change a reload loads, and a resize is
 * refused until then (docs/guides/hot-reload.md).
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer, apiUrl } from './_session.ts';
import { waitFor } from './_server.ts';
import { watchPlugins } from '../../src/plugins/reload-watch.ts';
import { PLUGIN, get, newPluginDir, post, type Pong } from './_reload.ts';

const labelModule = (text: string): string => `export function label(): string {\n  return '${text}';\n}\n`;

test.serial('an edited file linked into the plugin folder is a change: a resize is refused and a reload serves the edit', async (t) => {
  // The main thread's copy of the module answers too: a callable counter runs there.
  const dir = newPluginDir({ version: '1.0.0', register: "    api.counters.registerCallable('linked', 'label', 'label() on the main thread', () => label());" });
  // label.ts, which the plugin imports, becomes a link to a file beside the folder.
  const target = path.join(path.dirname(dir), 'shared-label.ts');
  fs.renameSync(path.join(dir, 'label.ts'), target);
  fs.symlinkSync(target, path.join(dir, 'label.ts'));
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 } }, [dir]);
  const c = await s.connect('json');
  try {
    t.is((await c.request('ping', { n: 1 }) as Pong).label, 'label-1');
    t.is((await get(s, '/v1/counters/linked/label/')).body.value, 'label-1');
    t.false((await get(s, `/v1/plugins/${PLUGIN}`)).body.source_changed as boolean);
    fs.writeFileSync(target, labelModule('label-2'));
    t.true((await get(s, `/v1/plugins/${PLUGIN}`)).body.source_changed as boolean);
    const resize = await fetch(`${apiUrl(s)}/v1/configurations/event_threads_size/2`, { method: 'PUT' });
    t.is(resize.status, 409);
    t.is((await c.request('ping', { n: 2 }) as Pong).label, 'label-1', 'no thread loaded the edit');
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200);
    t.deepEqual(reloaded.body.unchanged, []);
    // The linked module was compiled again from its target, on the new event threads.
    for (let i = 0; i < 6; i++) t.is((await c.request('ping', { n: 3 + i }) as Pong).label, 'label-2');
    t.is((await get(s, '/v1/counters/linked/label/')).body.value, 'label-2', 'the main thread compiled it again too');
  } finally {
    await c.close();
    await s.stop();
  }
});

test.serial('an edit inside a folder linked into the plugin is a change; a link back up the folder is walked once', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', raw: `import { definePlugin } from 'gsf';
import { label } from './lib/label.ts';
export default definePlugin({ name: '${PLUGIN}', version: '1.0.0', register(api) {
  api.sessions.onMessage('ping', (_b, msg) => msg.reply({ label: label() }));
} });
` });
  const shared = path.join(path.dirname(dir), 'shared-lib');
  fs.mkdirSync(shared);
  fs.writeFileSync(path.join(shared, 'label.ts'), labelModule('label-1'));
  fs.symlinkSync(shared, path.join(dir, 'lib'));
  // Links that would walk forever, and one to nothing.
  fs.symlinkSync(dir, path.join(shared, 'up'));
  fs.symlinkSync('..', path.join(dir, 'parent'));
  fs.symlinkSync(path.join(dir, 'missing.ts'), path.join(dir, 'dangling.ts'));
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 } }, [dir]);
  const c = await s.connect('json');
  try {
    t.is((await c.request('ping', { n: 1 }) as Pong).label, 'label-1');
    t.false((await get(s, `/v1/plugins/${PLUGIN}`)).body.source_changed as boolean);
    fs.writeFileSync(path.join(shared, 'label.ts'), labelModule('label-2'));
    t.true((await get(s, `/v1/plugins/${PLUGIN}`)).body.source_changed as boolean);
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200);
    t.deepEqual(reloaded.body.unchanged, []);
    t.is((await c.request('ping', { n: 2 }) as Pong).label, 'label-2');
  } finally {
    await c.close();
    await s.stop();
  }
});

test.serial('--watch reloads on an edit of a file or in a folder linked into the plugin from elsewhere', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', raw: `import { definePlugin } from 'gsf';
import { label } from './label.ts';
import { suffix } from './lib/suffix.ts';
export default definePlugin({ name: '${PLUGIN}', version: '1.0.0', register(api) {
  api.sessions.onMessage('ping', (_b, msg) => msg.reply({ label: label() + suffix() }));
} });
` });
  const target = path.join(path.dirname(dir), 'shared-label.ts');
  fs.renameSync(path.join(dir, 'label.ts'), target);
  fs.symlinkSync(target, path.join(dir, 'label.ts'));
  const shared = path.join(path.dirname(dir), 'shared-lib');
  fs.mkdirSync(shared);
  const suffixModule = (text: string): string => `export function suffix(): string {\n  return '${text}';\n}\n`;
  fs.writeFileSync(path.join(shared, 'suffix.ts'), suffixModule('/a'));
  fs.symlinkSync(shared, path.join(dir, 'lib'));
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 } }, [dir]);
  const c = await s.connect('json');
  const stop = watchPlugins(s.server, s.server.thread.log, 50);
  const served = async (): Promise<string> => (await c.request('ping', {}) as Pong).label;
  try {
    t.is(await served(), 'label-1/a');
    fs.writeFileSync(target, labelModule('label-2'));
    await waitFor(async () => (await served()) === 'label-2/a', 30000, 'the linked file reloaded').catch(() => undefined);
    t.is(await served(), 'label-2/a');
    fs.writeFileSync(path.join(shared, 'suffix.ts'), suffixModule('/b'));
    await waitFor(async () => (await served()) === 'label-2/b', 30000, 'the linked folder reloaded').catch(() => undefined);
    t.is(await served(), 'label-2/b', s.logs().filter((l) => /reload|file change/.test(l)).join('\n'));
  } finally {
    stop();
    await c.close();
    await s.stop();
  }
});
