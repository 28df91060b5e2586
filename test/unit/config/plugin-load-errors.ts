/** A plugin that cannot load is refused with a message that says why in a plugin author's terms. */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createThreadContext } from '../../../src/thread-setup.ts';
import { emptyManifest } from '../../../src/config/manifest.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bad-plugins-'));
test.after.always(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes `plugins/<name>/index.ts` (plus extra files) under a fresh folder and returns the entry. */
function plugin(name: string, source: string, extra: Record<string, string> = {}): string {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder, { recursive: true });
  for (const [file, text] of Object.entries(extra)) fs.writeFileSync(path.join(folder, file), text);
  fs.writeFileSync(path.join(folder, 'index.ts'), source);
  return path.join(folder, 'index.ts');
}

const load = (file: string) => createThreadContext(emptyManifest(dir), 'main', [file]);
const DEFINITION = "export default definePlugin({ name: 'x', version: '1.0.0', register() {} });\n";

test('top-level await: says plugins load with require() and where to move the await', async (t) => {
  const file = plugin('waits', `import { definePlugin } from 'gsf';\nawait Promise.resolve();\n${DEFINITION}`);
  await t.throwsAsync(load(file), {
    code: 'GSF_ERR_PLUGIN_LOAD',
    message: `plugin 'waits' load failed: ${file}:2:0 uses top-level await, which plugins cannot use: gsf loads plugins `
      + 'with require() on every thread. Move the await into register() or an api.onStart() hook.',
  } as never);
});

test('a syntax error: the file, line and column, and what the compiler expected', async (t) => {
  const file = plugin('typo', `import { definePlugin } from 'gsf';\nconst x = ;\n${DEFINITION}`);
  await t.throwsAsync(load(file), { message: `plugin 'typo' load failed: cannot compile: ${file}:2:10: ERROR: Unexpected ";"` });
});

test('a package the game project has not installed: which module, imported from where, and the install command', async (t) => {
  const file = plugin('needs', `import { definePlugin } from 'gsf';\nimport pad from '@acme/left-pad/strings';\n${DEFINITION}void pad;\n`);
  await t.throwsAsync(load(file), {
    message: `plugin 'needs' load failed: cannot find module '@acme/left-pad/strings' imported by ${file}: `
      + 'install it where the plugin can find it (npm install @acme/left-pad in the game project)',
  });
});

test('a missing file of the plugin: the path to check', async (t) => {
  const file = plugin('parts', `import { definePlugin } from 'gsf';\nimport { rules } from './rules.ts';\n${DEFINITION}void rules;\n`);
  await t.throwsAsync(load(file), {
    message: `plugin 'parts' load failed: cannot find module './rules.ts' imported by ${file}: check the path (TypeScript imports name the .ts file)`,
  });
});

test('an error thrown while the module runs names the file, and a plain file the parser refuses says it cannot compile', async (t) => {
  const file = plugin('boom', `import { definePlugin } from 'gsf';\nthrow new Error('no map file\\nsecond line');\n${DEFINITION}`);
  await t.throwsAsync(load(file), { message: `plugin 'boom' load failed: ${file} threw while it loaded: no map file` });
  const js = path.join(path.dirname(plugin('plain', DEFINITION)), 'notes.js');
  fs.writeFileSync(js, 'hi there\n');
  await t.throwsAsync(load(js), { message: `plugin 'notes' load failed: cannot compile: ${js}: Unexpected identifier 'there'` });
});

test('the same folder loads once the problem is fixed, with imports of its own files', async (t) => {
  const file = plugin('fixed', `import { definePlugin } from 'gsf';\nimport { rules } from './rules.ts';\n`
    + "export default definePlugin({ name: 'fixed', version: rules, register() {} });\n", { 'rules.ts': "export const rules = '3.0.0';\n" });
  const host = await load(file);
  t.deepEqual(host.plugins, [{ name: 'fixed', version: '3.0.0', file }]);
});
