import test from 'ava';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
// @ts-expect-error: a plain ES module without types
import layers from '../../../eslint/layers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const LAYERS = [['errors'], ['events'], ['api', 'objects'], ['session']];

/** The rule's messages for `code` as if it were the file `file` (relative to the repository). */
function lint(file: string, code: string): string[] {
  const linter = new Linter({ configType: 'flat', cwd: root });
  const messages = linter.verify(code, [{
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser as Linter.Parser },
    plugins: { 'gsf-layers': layers as never },
    rules: { 'gsf-layers/one-way': ['error', { src: 'src', layers: LAYERS }] },
  }], path.join(root, file));
  return messages.map((m) => m.message);
}

test('value imports point down the layers; types, the same folder and outside files are free', (t) => {
  t.deepEqual(lint('src/session/a.ts', "import { x } from '../api/b.ts';\nimport { y } from '../errors.ts';\nvoid x; void y;"), []);
  t.deepEqual(lint('src/api/a.ts', "import type { X } from '../session/b.ts';\nimport { type Y } from '../session/c.ts';\nexport type { X, Y };"), []);
  t.deepEqual(lint('src/api/a.ts', "import { x } from './b.ts';\nvoid x;"), []);
  t.deepEqual(lint('test/a.ts', "import { x } from '../src/session/b.ts';\nvoid x;"), []);
});

test('an import up a layer, or sideways within one, is an error naming both folders', (t) => {
  t.deepEqual(lint('src/events/a.ts', "import { x } from '../session/b.ts';\nvoid x;"),
    ['src/events (layer 1) may not import values from src/session (layer 3): layers import downward only (eslint.config.js); hand it over through a hook the lower layer defines']);
  t.deepEqual(lint('src/api/a.ts', "export { x } from '../objects/b.ts';"),
    ['src/api (layer 2) may not import values from src/objects (layer 2): layers import downward only (eslint.config.js); hand it over through a hook the lower layer defines']);
  t.deepEqual(lint('src/api/a.ts', "import { type X, y } from '../session/b.ts';\nvoid y; export type { X };").length, 1, 'a value among types');
  t.deepEqual(lint('src/nowhere/a.ts', "import { x } from '../errors.ts';\nvoid x;"),
    ["src/nowhere is in no layer of eslint.config.js's gsf-layers/one-way: add it to one"]);
});
