/**
 * `--watch` (docs/guides/hot-reload.md) keeps every plugin's files watched for as long as the
 * server runs: a plugin folder deleted and written again (a clean build of it) is watched again,
 * and the object declarations beside a single-file plugin count as its source (a change is
 * refused with stage `objects`, as a reload refuses it).
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSessionServer } from './_session.ts';
import { PLUGIN, newPluginDir, pluginCode, writePlugin, type Pong } from './_reload.ts';
import { waitFor } from './_server.ts';
import { watchPlugins } from '../../src/plugins/reload-watch.ts';

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
