import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain ES module script without types
import { sourcesDigest } from '../../../native/install.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const digestOf = sourcesDigest as (base?: string) => string;

/** A copy of what the addon is built from. */
function copySources(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-install-'));
  for (const rel of ['native/core', 'native/binding', 'native/include', 'cmake', 'CMakeLists.txt', 'native/addon-sources.txt']) {
    fs.cpSync(path.join(root, rel), path.join(dir, rel), { recursive: true });
  }
  return dir;
}

test('a prebuilt addon is taken only for the same sources: any change to what the addon is built from changes the digest', (t) => {
  const dir = copySources();
  try {
    const digest = digestOf(dir);
    t.regex(digest, /^[0-9a-f]{64}$/);
    t.is(digestOf(root), digest, 'a copy of the same sources has the same digest');
    fs.appendFileSync(path.join(dir, 'native', 'core', 'tag_queue.cc'), '\n');
    const edited = digestOf(dir);
    t.not(edited, digest);
    fs.writeFileSync(path.join(dir, 'native', 'include', 'extra.h'), '');
    t.not(digestOf(dir), edited, 'a new header');
    fs.appendFileSync(path.join(dir, 'CMakeLists.txt'), '# x\n');
    t.not(digestOf(dir), edited);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
