/** A plugin's source as a reload sees it: hashes, its modules in the cache, and list replacement. */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { dropModules, hashSource, pluginSource, restoreModules, sourceFiles } from '../../../src/plugins/reload-source.ts';
import { replaceEntries } from '../../../src/plugins/reload-stage.ts';

function folder(): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-reload-source-')), 'game');
  fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'node_modules', 'dep'), { recursive: true });
  fs.mkdirSync(path.join(dir, '.git'));
  fs.writeFileSync(path.join(dir, 'index.cjs'), 'module.exports = { value: require("./rules.cjs").value };\n');
  fs.writeFileSync(path.join(dir, 'index.js'), 'module.exports = require("./index.cjs");\n');
  fs.writeFileSync(path.join(dir, 'rules.cjs'), 'module.exports = { value: 1 };\n');
  fs.writeFileSync(path.join(dir, 'objects', 'types.json'), '{"types": []}\n');
  fs.writeFileSync(path.join(dir, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
  fs.writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref\n');
  return dir;
}

test('the hash covers the plugin folder but node_modules and hidden folders; object declarations have their own', (t) => {
  const dir = folder();
  const source = pluginSource('managed', path.join(dir, 'index.js'));
  t.is(source.folder, dir);
  t.deepEqual(sourceFiles(source).map((f) => path.relative(dir, f)), ['index.cjs', 'index.js', path.join('objects', 'types.json'), 'rules.cjs']);
  const first = hashSource(source);
  t.regex(first.hash, /^[0-9a-f]{64}$/);
  fs.writeFileSync(path.join(dir, 'node_modules', 'dep', 'index.js'), 'module.exports = 2;\n');
  fs.writeFileSync(path.join(dir, '.git', 'HEAD'), 'other\n');
  t.deepEqual(hashSource(source), first, 'packages and hidden files do not count');
  fs.writeFileSync(path.join(dir, 'rules.cjs'), 'module.exports = { value: 2 };\n');
  const edited = hashSource(source);
  t.not(edited.hash, first.hash);
  t.is(edited.objectsHash, first.objectsHash);
  fs.writeFileSync(path.join(dir, 'objects', 'types.json'), '{"types": [1]}\n');
  t.not(hashSource(source).objectsHash, first.objectsHash);
  // A file renamed with the same content is a change too.
  const before = hashSource(source).hash;
  fs.renameSync(path.join(dir, 'rules.cjs'), path.join(dir, 'rules2.cjs'));
  t.not(hashSource(source).hash, before);
  // A single-file plugin is that file; a native plugin, its library.
  t.deepEqual(sourceFiles(pluginSource('managed', path.join(dir, 'index.cjs'))), [path.join(dir, 'index.cjs')]);
  t.is(pluginSource('native', path.join(dir, 'index.js')).folder, null);
});

test('dropModules takes the plugin\'s own modules out of the cache and restoreModules puts them back', (t) => {
  const dir = folder();
  const require = createRequire(import.meta.url);
  const source = pluginSource('managed', path.join(dir, 'index.js'));
  const dep = path.join(dir, 'node_modules', 'dep', 'index.js');
  t.is((require(path.join(dir, 'index.js')) as { value: number }).value, 1);
  require(dep);
  const saved = dropModules(source);
  t.deepEqual([...saved.keys()].sort(), [path.join(dir, 'index.cjs'), path.join(dir, 'index.js'), path.join(dir, 'rules.cjs')]);
  t.truthy(require.cache[dep], 'packages stay cached');
  fs.writeFileSync(path.join(dir, 'rules.cjs'), 'module.exports = { value: 2 };\n');
  t.is((require(path.join(dir, 'index.js')) as { value: number }).value, 2, 'loaded from disk again');
  restoreModules(source, saved);
  t.is((require(path.join(dir, 'index.js')) as { value: number }).value, 1, 'the old modules are back');
});

test('replaceEntries replaces a plugin\'s entries where they were, and keeps plugin order for a newcomer', (t) => {
  const order = ['a', 'b', 'c'];
  const list = [{ plugin: 'a', n: 1 }, { plugin: 'b', n: 2 }, { plugin: 'b', n: 3 }, { plugin: 'c', n: 4 }, { plugin: 'gsf', n: 5 }];
  replaceEntries(list, 'b', [{ plugin: 'b', n: 6 }], order);
  t.deepEqual(list.map((e) => e.n), [1, 6, 4, 5]);
  replaceEntries(list, 'b', [], order);
  t.deepEqual(list.map((e) => e.n), [1, 4, 5]);
  replaceEntries(list, 'b', [{ plugin: 'b', n: 7 }, { plugin: 'b', n: 8 }], order);
  t.deepEqual(list.map((e) => e.n), [1, 7, 8, 4, 5], 'after a, before c');
  replaceEntries(list, 'c', [{ plugin: 'c', n: 9 }], order);
  t.deepEqual(list.map((e) => e.n), [1, 7, 8, 9, 5], "gsf's own entries stay last");
  const empty: Array<{ plugin: string; n: number }> = [];
  replaceEntries(empty, 'a', [{ plugin: 'a', n: 1 }], order);
  t.deepEqual(empty, [{ plugin: 'a', n: 1 }]);
});
