// `gsf objects types`: refused options and the usage from the command line (a process each);
// --out, --check and stale files run in this process (each gsf process compiles gsf again).
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runObjectsCommand } from '../../src/objects-command.ts';
import { describeError } from '../../src/errors.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const gsf = path.join(root, 'bin', 'gsf.mjs');

/** A game folder: MANIFEST.json, objects/*.json and plugins/<name>/objects/*.json. */
function project(objects: Record<string, unknown>, plugins: Record<string, Record<string, unknown>> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-objcli-'));
  fs.writeFileSync(path.join(dir, 'MANIFEST.json'), JSON.stringify({ components: [] }));
  fs.mkdirSync(path.join(dir, 'objects'));
  for (const [f, v] of Object.entries(objects)) fs.writeFileSync(path.join(dir, 'objects', f), JSON.stringify(v));
  for (const [p, files] of Object.entries(plugins)) {
    fs.mkdirSync(path.join(dir, 'plugins', p, 'objects'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'plugins', p, 'index.ts'), 'export default {};\n');
    for (const [f, v] of Object.entries(files)) fs.writeFileSync(path.join(dir, 'plugins', p, 'objects', f), JSON.stringify(v));
  }
  return dir;
}

function gsfIn(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [gsf, 'objects', ...args], { cwd, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** `gsf objects …` in this process, from `cwd`: what the command line prints and its exit code (1 on an error, as gsf prints it). */
function objectsIn(cwd: string, ...args: string[]) {
  const option = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i < 0 ? undefined : args[i + 1];
  };
  let out = '';
  const before = process.cwd();
  process.chdir(cwd);
  try {
    return { code: runObjectsCommand(args, option, (text) => { out += text; }), out, err: '' };
  } catch (err) {
    return { code: 1, out, err: `gsf: ${describeError(err)}\n` };
  } finally {
    process.chdir(before);
  }
}

const account = { Account: { fields: { name: 'string' }, unique: ['name'] } };

test('a mistyped option of objects types is refused (exit 2), not ignored: --chek writes nothing', (t) => {
  const dir = project({ 'a.json': account });
  const r = gsfIn(dir, 'types', '--chek');
  t.is(r.code, 2);
  t.true(r.err.startsWith("gsf objects: unknown option '--chek'"), r.err);
  t.false(fs.existsSync(path.join(dir, 'objects', 'gsf-objects.d.ts')), 'the command wrote files although only a check was meant');
});

test('an option of objects types given twice is refused (exit 2): --out twice writes nothing', (t) => {
  const dir = project({ 'a.json': account });
  const r = gsfIn(dir, 'types', '--out', 'one.ts', '--out', 'two.ts');
  t.is(r.code, 2);
  t.true(r.err.startsWith('gsf objects: --out is given more than once'), r.err);
  t.deepEqual([fs.existsSync(path.join(dir, 'one.ts')), fs.existsSync(path.join(dir, 'two.ts'))], [false, false]);
});

test('a mistyped --manifest of objects types is refused (exit 2), not replaced by ./MANIFEST.json', (t) => {
  const dir = project({ 'a.json': account });
  const r = gsfIn(dir, 'types', '--manfest', 'other.json');
  t.is(r.code, 2);
  t.true(r.err.startsWith("gsf objects: unknown option '--manfest'"), r.err);
  t.false(fs.existsSync(path.join(dir, 'objects', 'gsf-objects.d.ts')));
});

test.serial('a string default holding U+2028 gives a declaration file that still parses', (t) => {
  const dir = project({ 'a.json': { Note: { fields: { text: { type: 'string', default: 'a\u2028b' } } } } });
  const r = objectsIn(dir, 'types');
  t.is(r.code, 0, r.err);
  const text = fs.readFileSync(path.join(dir, 'objects', 'gsf-objects.d.ts'), 'utf8');
  const out = ts.transpileModule(text, { reportDiagnostics: true, fileName: 'gsf-objects.ts' });
  t.deepEqual(out.diagnostics!.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), []);
});

test.serial('--out naming a declaration JSON file is refused and the declaration is kept', (t) => {
  const dir = project({ 'a.json': account });
  const json = path.join(dir, 'objects', 'a.json');
  const before = fs.readFileSync(json, 'utf8');
  const r = objectsIn(dir, 'types', '--out', 'objects/a.json');
  t.is(r.code, 1);
  t.is(r.err, "gsf: --out must name a TypeScript file (.ts or .d.ts), got 'objects/a.json'\n");
  t.is(fs.readFileSync(json, 'utf8'), before, 'the object declaration was overwritten by TypeScript');
});

test.serial('--check reports a generated file whose declarations were all removed', (t) => {
  const dir = project({ 'a.json': account }, { p: { 'p.json': { P: { fields: { n: 'string' } } } } });
  t.is(objectsIn(dir, 'types').code, 0);
  fs.rmSync(path.join(dir, 'plugins', 'p', 'objects', 'p.json'));
  // plugins/p/objects/gsf-objects.d.ts still declares type P, which no longer exists.
  const r = objectsIn(dir, 'types', '--check');
  t.is(r.code, 1, r.out);
  t.true(r.out.includes('out of date: plugins/p/objects/gsf-objects.d.ts'), r.out);
  t.true(fs.existsSync(path.join(dir, 'plugins', 'p', 'objects', 'gsf-objects.d.ts')), '--check changes nothing');
});

test.serial('a plain run removes a generated file whose declarations were all removed, and keeps a file of the game', (t) => {
  const dir = project({ 'a.json': account }, { p: { 'p.json': { P: { fields: { n: 'string' } } } }, q: {} });
  t.is(objectsIn(dir, 'types').code, 0);
  fs.rmSync(path.join(dir, 'plugins', 'p', 'objects', 'p.json'));
  const own = path.join(dir, 'plugins', 'q', 'objects', 'gsf-objects.d.ts');
  fs.writeFileSync(own, '// written by hand\nexport {};\n');
  const r = objectsIn(dir, 'types');
  t.is(r.code, 0, r.err);
  t.true(r.out.includes('removed plugins/p/objects/gsf-objects.d.ts'), r.out);
  t.false(fs.existsSync(path.join(dir, 'plugins', 'p', 'objects', 'gsf-objects.d.ts')));
  t.is(fs.readFileSync(own, 'utf8'), '// written by hand\nexport {};\n');
  t.is(objectsIn(dir, 'types', '--check').code, 0);
});

test.serial('--out never writes over a file the command did not write', (t) => {
  const dir = project({ 'a.json': account }, { p: {} });
  const source = path.join(dir, 'plugins', 'p', 'index.ts');
  const r = objectsIn(dir, 'types', '--out', 'plugins/p/index.ts');
  t.is(r.code, 1);
  t.is(r.err, 'gsf: --out: plugins/p/index.ts exists and was not written by gsf objects types; remove it or name another file\n');
  t.is(fs.readFileSync(source, 'utf8'), 'export default {};\n');
  // Its own earlier output is written over.
  t.is(objectsIn(dir, 'types', '--out', 'types.d.ts').code, 0);
  const again = objectsIn(dir, 'types', '--out', 'types.d.ts');
  t.is(again.code, 0);
  t.true(again.out.includes('up to date: types.d.ts'), again.out);
});

test('objects without a subcommand prints its usage on standard error (exit 2)', (t) => {
  const dir = project({ 'a.json': account });
  const r = gsfIn(dir);
  t.is(r.code, 2);
  t.is(r.out, '');
  t.true(r.err.startsWith('gsf: objects needs a command\nusage: gsf objects types'), r.err);
});
