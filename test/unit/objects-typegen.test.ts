/**
 * `gsf objects types`: the generated declarations of this repository are up to date, and they
 * type `api.objects` field by field: tsc accepts correct use and reports each wrong one.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { declarationFiles } from '../../src/objects/schema.ts';
import { generateDeclarations, GENERATED_FILE } from '../../src/objects/typegen.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

test('the committed gsf-objects.d.ts files match their JSON declarations', (t) => {
  const folders = [root, path.join(root, 'test', 'fixtures'), path.join(root, 'bench')];
  const plugins = folders.flatMap((f) => {
    const dir = path.join(f, 'plugins');
    // Native plugin folders have no TypeScript to type (plugins/arena-native shares the arena's declarations).
    return fs.existsSync(dir)
      ? fs.readdirSync(dir).filter((p) => !fs.existsSync(path.join(dir, p, 'gsf-plugin.json'))).map((p) => path.join(dir, p, 'index.ts'))
      : [];
  });
  const files = declarationFiles(path.join(root, 'no-manifest-here'), plugins);
  t.true(files.some((f) => f.includes(path.join('plugins', 'arena'))));
  for (const g of generateDeclarations(files)) {
    t.is(path.basename(g.file), GENERATED_FILE);
    t.is(fs.readFileSync(g.file, 'utf8'), g.text, `${g.file} is out of date: run gsf objects types`);
  }
});

test('generated declarations type every call: tsc accepts correct use and reports wrong fields, types and keys', (t) => {
  const dir = path.join(root, 'build', 'typegen-test');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
  const json = path.join(dir, 'objects', 'shop.json');
  fs.writeFileSync(json, JSON.stringify({
    Shopper: { fields: { name: 'string', coins: { type: 'integer', default: 0 }, bag: { type: 'array', of: 'string', default: [] }, seen: 'datetime' }, unique: ['name'] },
  }));
  const [generated] = generateDeclarations([json]);
  fs.writeFileSync(generated!.file, generated!.text);
  const use = path.join(dir, 'use.ts');
  fs.writeFileSync(use, [
    "import type { PluginApi } from 'gsf';",
    'export async function ok(api: PluginApi): Promise<number> {',
    "  const s = api.objects.create('Shopper', { name: 'ada', seen: new Date() });",
    "  const n: number = s.get('coins') + 1;",
    "  s.set('bag', [...s.get('bag'), 'apple']);",
    "  const f = await api.objects.fetchBy('Shopper', 'name', 'ada', 'write');",
    "  return n + (f?.get('seen').getTime() ?? 0);",
    '}',
    'export async function wrong(api: PluginApi): Promise<void> {',
    "  api.objects.create('Shopper', { seen: new Date() });",
    "  const s = await api.objects.fetch('Shopper', 'x');",
    "  s?.set('coins', 'many');",
    "  s?.get('colour');",
    "  await api.objects.fetchBy('Shopper', 'coins', 1);",
    "  await api.objects.fetch('Shoper', 'x');",
    '}',
    '',
  ].join('\n'));
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
  const program = ts.createProgram([use, generated!.file], { ...options, noEmit: true });
  const errors = ts.getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName === use)
    .map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1);
  t.deepEqual([...new Set(errors)], [10, 12, 13, 14, 15]);
});
