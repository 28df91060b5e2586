/**
 * The README's "A native plugin in brief", built as a plugin kept outside this repository
 * (gsf resolved from node_modules, gsf_add_plugin from cmake/GsfPlugin.cmake), then served; and
 * built against a checkout (-Dgsf_DIR=<checkout>/cmake), or refused clearly when gsf is nowhere.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { GsfRequestError, ProtocolError } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { fixtures } from './_server.ts';
import { startSessionServer } from './_session.ts';

const root = path.join(fixtures, '..', '..');

/** The code blocks of a README section, by language, in order. */
function sectionBlocks(heading: string): Array<{ lang: string; code: string }> {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`no section '${heading}' in README.md`);
  // The section ends at the next heading of level 2 or 3 (a `# ` line inside the CMake block is a comment).
  const next = /\n#{2,3} /g;
  next.lastIndex = start + heading.length + 2;
  const end = next.exec(readme)?.index ?? readme.length;
  const section = readme.slice(start, end);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

test('the README example builds outside the repository with gsf_add_plugin and answers on a session', async (t) => {
  const blocks = sectionBlocks('### A native plugin in brief');
  const source = blocks.find((b) => b.lang === 'c')!.code;
  t.true(source.split('\n').length <= 36, 'about thirty lines');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-external-'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(root, path.join(dir, 'node_modules', 'gsf'), 'dir');
  const plugin = path.join(dir, 'hello-native');
  fs.mkdirSync(plugin);
  fs.writeFileSync(path.join(plugin, 'hello.c'), source);
  fs.writeFileSync(path.join(plugin, 'CMakeLists.txt'), blocks.find((b) => b.lang === 'cmake')!.code);
  fs.writeFileSync(path.join(plugin, 'gsf-plugin.json'), blocks.find((b) => b.lang === 'json')!.code);
  execFileSync('cmake', ['-S', plugin, '-B', path.join(plugin, 'out')], { stdio: 'pipe' });
  execFileSync('cmake', ['--build', path.join(plugin, 'out')], { stdio: 'pipe' });
  t.true(fs.existsSync(path.join(plugin, 'build', 'hello-native.so')));

  const s = await startSessionServer({}, [plugin]);
  const c = await s.connect('json');
  try {
    t.deepEqual(await c.request('hello', { name: 'Ada' }), { greeting: 'Ada' });
    const err = await c.request('hello', { name: 1 }).catch((e: unknown) => e);
    t.true(err instanceof GsfRequestError);
    t.is((err as GsfRequestError).code, ProtocolError.handlerFailed);
    t.is(native.counterValue('hello', 'greetings'), 1);
  } finally {
    await c.close();
    await s.stop();
  }
});

test('the README example builds against a checkout with -Dgsf_DIR, and says how when gsf is nowhere', (t) => {
  const blocks = sectionBlocks('### A native plugin in brief');
  // No node_modules anywhere above: a temporary folder outside the repository.
  const plugin = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-checkout-'));
  fs.writeFileSync(path.join(plugin, 'hello.c'), blocks.find((b) => b.lang === 'c')!.code);
  fs.writeFileSync(path.join(plugin, 'CMakeLists.txt'), blocks.find((b) => b.lang === 'cmake')!.code);
  let failure = '';
  try {
    execFileSync('cmake', ['-S', plugin, '-B', path.join(plugin, 'lost')], { stdio: 'pipe' });
  } catch (err) {
    failure = String((err as { stderr?: Buffer }).stderr ?? err).replace(/\s+/g, ' '); // CMake wraps its messages
  }
  t.regex(failure, /gsf not found: run npm install gsf here, or pass -Dgsf_DIR=<gsf checkout>\/cmake/);
  t.false(failure.includes('include called with wrong number of arguments'));
  t.false(failure.includes('Unknown CMake command'));
  execFileSync('cmake', ['-S', plugin, '-B', path.join(plugin, 'out'), `-Dgsf_DIR=${path.join(root, 'cmake')}`], { stdio: 'pipe' });
  execFileSync('cmake', ['--build', path.join(plugin, 'out')], { stdio: 'pipe' });
  t.true(fs.existsSync(path.join(plugin, 'build', 'hello-native.so')));
  // A gsf_DIR that is not gsf's cmake folder: CMake's own message names gsf_DIR and the file it looked for.
  let wrong = '';
  try {
    execFileSync('cmake', ['-S', plugin, '-B', path.join(plugin, 'wrong'), `-Dgsf_DIR=${plugin}`], { stdio: 'pipe' });
  } catch (err) {
    wrong = String((err as { stderr?: Buffer }).stderr ?? err).replace(/\s+/g, ' ');
  }
  t.regex(wrong, /gsf-config\.cmake/);
  t.regex(wrong, /gsf_DIR/);
});
