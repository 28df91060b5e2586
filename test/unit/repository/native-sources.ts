/**
 * native/addon-sources.txt is the one list of the addon's sources (CMakeLists.txt and
 * binding.gyp both read it), and native/binding/testing-sources.txt lists what only the testing
 * build adds: together they name every source file of native/core and native/binding, once.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('the addon and testing source lists name exactly the .cc files of native/core and native/binding', (t) => {
  const listed = execFileSync(process.execPath, [path.join(root, 'native', 'list-sources.mjs')], { encoding: 'utf8' }).split('\n');
  const testing = fs.readFileSync(path.join(root, 'native', 'binding', 'testing-sources.txt'), 'utf8')
    .split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const present = ['core', 'binding'].flatMap((dir) => fs.readdirSync(path.join(root, 'native', dir))
    .filter((f) => f.endsWith('.cc')).map((f) => `native/${dir}/${f}`));
  t.deepEqual([...listed, ...testing].sort(), [...present].sort());
  t.deepEqual(testing, ['native/binding/testing_binding.cc']);
  t.false(listed.some((f) => testing.includes(f)), 'the production addon leaves the testing sources out');
});
