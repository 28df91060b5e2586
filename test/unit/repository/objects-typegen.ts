/**
 * `gsf objects types`: the generated declarations of this repository are up to date. How they type
 * `api.objects` field by field is checked by the typecheck, on test/fixtures/typegen/use.ts.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { declarationFiles } from '../../../src/objects/schema.ts';
import { generateDeclarations, GENERATED_FILE } from '../../../src/objects/typegen.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('the committed gsf-objects.d.ts files match their JSON declarations', (t) => {
  const folders = [root, path.join(root, 'test', 'fixtures'), path.join(root, 'bench')];
  const plugins = [path.join(root, 'test', 'fixtures', 'typegen', 'use.ts'), ...folders.flatMap((f) => {
    const dir = path.join(f, 'plugins');
    // Native plugin folders have no TypeScript to type (plugins/arena-native shares the arena's declarations).
    return fs.existsSync(dir)
      ? fs.readdirSync(dir).filter((p) => !fs.existsSync(path.join(dir, p, 'gsf-plugin.json'))).map((p) => path.join(dir, p, 'index.ts'))
      : [];
  })];
  const files = declarationFiles(path.join(root, 'no-manifest-here'), plugins);
  t.true(files.some((f) => f.includes(path.join('plugins', 'arena'))));
  t.true(files.some((f) => f.includes(path.join('fixtures', 'typegen'))));
  for (const g of generateDeclarations(files)) {
    t.is(path.basename(g.file), GENERATED_FILE);
    t.is(fs.readFileSync(g.file, 'utf8'), g.text, `${g.file} is out of date: run gsf objects types`);
  }
});
