import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { createThreadContext } from '../../../src/thread-setup.ts';
import { emptyManifest } from '../../../src/config/manifest.ts';
import os from 'node:os';
import { resolvePluginFiles, unlistedPluginFolders } from '../../../src/plugins/loader.ts';
import { PluginError } from '../../../src/errors.ts';
import { fixtures } from '../../integration/_server.ts';

const bad = (name: string): string => path.join(fixtures, 'bad-plugins', name, 'index.ts');
const host = (files: string[]) => createThreadContext(emptyManifest(fixtures), 'main', files);

test('a module without a default export', async (t) => {
  await t.throwsAsync(host([bad('no-default')]), {
    code: 'GSF_ERR_PLUGIN_EXPORT',
    message: `plugin 'no-default' (${bad('no-default')}) has no default export; write \`export default definePlugin({ name, version, register })\``,
  } as never);
});

test('malformed definitions name the plugin and what is missing', async (t) => {
  await t.throwsAsync(host([bad('not-object')]), {
    message: `plugin 'not-object' (${bad('not-object')}) default export must be a plugin definition object, got number`,
  });
  await t.throwsAsync(host([bad('no-name')]), { message: `plugin 'no-name' (${bad('no-name')}) definition needs a non-empty string 'name'` });
  await t.throwsAsync(host([bad('no-register')]), { message: `plugin 'no-register' (${bad('no-register')}) definition needs a 'register(api)' function` });
});

test('a module that fails to import', async (t) => {
  const err = await t.throwsAsync(host([bad('throws-on-import')]), { message: `plugin 'throws-on-import' load failed: ${bad('throws-on-import')} threw while it loaded: kaput` });
  t.true(err instanceof PluginError);
  t.like(err as PluginError, { code: 'GSF_ERR_PLUGIN_LOAD', plugin: 'throws-on-import', stage: 'load' });
  t.is((((err as PluginError).cause as Error).cause as Error).message, 'kaput', "the module's own error is kept as the cause");
});

test('duplicate plugin names and duplicate events', async (t) => {
  await t.throwsAsync(host([bad('dup-a'), bad('dup-b')]), {
    message: "plugin 'dup-b' registers plugin name 'dup', already registered by plugin 'dup-a'",
  });
  await t.throwsAsync(host([bad('dup-a'), bad('dup-event')]), {
    message: "plugin 'dupevent' registers event 'same.event', already registered by plugin 'dup'",
  });
});

test('a register function that throws', async (t) => {
  const err = await t.throwsAsync(host([bad('register-throws')]), { message: "plugin 'regthrows' register failed: no config" });
  t.like(err as PluginError, { code: 'GSF_ERR_HANDLER_FAILED', plugin: 'regthrows', stage: 'register' });
  // The cause keeps the plugin's own stack, pointing into its file.
  t.regex(((err as PluginError).cause as Error).stack ?? '', /register-throws[/\\]index\.ts/);
});

test('plugin entries resolve to folders under plugins/ or to paths', (t) => {
  const m = { dir: fixtures, file: 'M', plugins: ['probe', './bad-plugins/no-name'] };
  t.deepEqual(resolvePluginFiles(m), [path.join(fixtures, 'plugins', 'probe', 'index.ts'), bad('no-name')]);
  t.deepEqual(resolvePluginFiles({ dir: fixtures, file: 'M', plugins: null }),
    fs.readdirSync(path.join(fixtures, 'plugins')).sort().map((p) => path.join(fixtures, 'plugins', p, 'index.ts')));
  t.throws(() => resolvePluginFiles({ dir: fixtures, file: 'M', plugins: ['nope'] }), {
    message: `plugin 'nope' load failed: not found at ${path.join(fixtures, 'plugins', 'nope')} (listed in M)`,
  });
  // A file that is neither a module nor a library would run as JavaScript: refused by its path.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-entries-'));
  fs.writeFileSync(path.join(dir, 'notes'), 'hi there\n');
  fs.writeFileSync(path.join(dir, 'game.mjs'), '');
  t.deepEqual(resolvePluginFiles({ dir, file: 'M', plugins: ['./game.mjs'] }), [path.join(dir, 'game.mjs')]);
  t.throws(() => resolvePluginFiles({ dir, file: 'M', plugins: ['./notes'] }), {
    message: `plugin './notes' load failed: ${path.join(dir, 'notes')} is not a plugin: list a folder (with an index.ts, index.js, … `
      + 'or a gsf-plugin.json), a module file (.ts, .mts, .cts, .js, .mjs, .cjs) or a native library (listed in M)',
  });
});

test('the folders under plugins/ that a plugins list leaves out are named (a list by name or by path)', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-unlisted-'));
  for (const name of ['a', 'b', 'chat', '.hidden', '_shared']) fs.mkdirSync(path.join(dir, 'plugins', name), { recursive: true });
  fs.writeFileSync(path.join(dir, 'plugins', 'notes.txt'), '');
  t.deepEqual(unlistedPluginFolders({ dir, plugins: ['a', './plugins/b', '../elsewhere'] }), ['chat']);
  t.deepEqual(unlistedPluginFolders({ dir, plugins: [] }), ['a', 'b', 'chat']);
  // Without a list every folder loads; without a plugins/ folder there is none to name.
  t.deepEqual(unlistedPluginFolders({ dir, plugins: null }), []);
  t.deepEqual(unlistedPluginFolders({ dir: path.join(dir, 'plugins', 'a'), plugins: ['x'] }), []);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('additional_configurations must name a defined flag', async (t) => {
  const m = emptyManifest(fixtures);
  m.components.RuntimeConfiguration!.additional_configurations = ['probe_level', 'nope'];
  await t.throwsAsync(createThreadContext(m, 'main', [path.join(fixtures, 'plugins', 'probe', 'index.ts')]), {
    message: "(defaults): RuntimeConfiguration.additional_configurations names 'nope', which no plugin defines as a flag",
  });
});
