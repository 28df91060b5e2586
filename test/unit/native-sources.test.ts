/**
 * native/addon-sources.txt is the one list of the addon's sources (CMakeLists.txt and
 * binding.gyp both read it): it must name every source file of native/core and native/binding.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

test('the addon source list names exactly the .cc files of native/core and native/binding', (t) => {
  const listed = execFileSync(process.execPath, [path.join(root, 'native', 'list-sources.mjs')], { encoding: 'utf8' }).split('\n');
  const present = ['core', 'binding'].flatMap((dir) => fs.readdirSync(path.join(root, 'native', dir))
    .filter((f) => f.endsWith('.cc')).map((f) => `native/${dir}/${f}`));
  t.deepEqual([...listed].sort(), [...present].sort());
});
