// The package's install step: builds the native addon with cmake-js into build/addon, or, when
// GSF_NATIVE_PREBUILT names a build/addon folder made from the very same native sources (its
// sources.sha256 matches), takes that build instead of compiling again. The stamp covers every
// file that goes into the addon, so a stale or foreign build is never taken.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'build', 'addon');
const ADDON = path.join('Release', 'gsf_native.node');
const STAMP = 'sources.sha256';

/** A digest of the addon's sources, build files and target platform. */
export function sourcesDigest(base = root) {
  const hash = crypto.createHash('sha256');
  hash.update(`${process.platform}-${process.arch}\n`);
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(base, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else files.push(rel);
    }
  };
  for (const dir of ['native/core', 'native/binding', 'native/include', 'cmake']) walk(dir);
  files.push('CMakeLists.txt', 'native/addon-sources.txt');
  for (const rel of files.sort()) {
    hash.update(`${rel.split(path.sep).join('/')}\n`);
    hash.update(fs.readFileSync(path.join(base, rel)));
  }
  return hash.digest('hex');
}

function main() {
  const digest = sourcesDigest();
  const prebuilt = process.env.GSF_NATIVE_PREBUILT;
  if (prebuilt) {
    let theirs = '';
    try {
      theirs = fs.readFileSync(path.join(prebuilt, STAMP), 'utf8').trim();
    } catch {
      // no stamp: not a build this script made
    }
    if (theirs === digest && fs.existsSync(path.join(prebuilt, ADDON))) {
      fs.mkdirSync(path.join(out, 'Release'), { recursive: true });
      fs.copyFileSync(path.join(prebuilt, ADDON), path.join(out, ADDON));
      fs.writeFileSync(path.join(out, STAMP), digest + '\n');
      console.log(`gsf: native addon taken from ${prebuilt} (same sources)`);
      return;
    }
    console.log(`gsf: ${prebuilt} was built from other sources; compiling the native addon`);
  }
  const cmakeJs = createRequire(path.join(root, 'package.json')).resolve('cmake-js/bin/cmake-js');
  const r = spawnSync(process.execPath, [cmakeJs, 'compile', '--out', 'build/addon'], { cwd: root, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
  fs.writeFileSync(path.join(out, STAMP), digest + '\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
