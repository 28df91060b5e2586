import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain ES module script without types
import { compare, measure } from '../../../native/abi/layout.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const headerPath = path.join(root, 'native', 'include', 'gsf_plugin.h');
const header = fs.readFileSync(headerPath, 'utf8');
const frozen = fs.readFileSync(path.join(root, 'native', 'abi', 'gsf_plugin.layout'), 'utf8')
  .trim().split('\n').filter((l) => !l.startsWith('#'));
const layoutOf = measure as (file: string) => string[];
const problemsOf = compare as (frozen: string[], now: string[]) => string[];

/** The layout of the shipped header after `edit`; the header's own includes still resolve. */
function edited(edit: (text: string) => string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-abi-test-'));
  try {
    const file = path.join(dir, 'gsf_plugin.h');
    const text = edit(header);
    if (text === header) throw new Error('the edit changed nothing');
    fs.writeFileSync(file, text);
    for (const f of fs.readdirSync(path.dirname(headerPath))) if (f !== 'gsf_plugin.h') fs.copyFileSync(path.join(path.dirname(headerPath), f), path.join(dir, f));
    return layoutOf(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const bump = (text: string) => text.replace(/#define GSF_PLUGIN_ABI_MINOR (\d+)/, (_m, n: string) => `#define GSF_PLUGIN_ABI_MINOR ${Number(n) + 1}`);

test('gsf_plugin.h has exactly its frozen layout (after an append: node native/abi/layout.mjs --update)', (t) => {
  const now = layoutOf(headerPath);
  t.deepEqual(problemsOf(frozen, now), []);
  t.deepEqual(now, frozen);
  t.true(frozen.some((l) => l.startsWith('field gsf_type_host_api.mem_alloc ')));
});

test('a field that moves in a table breaks the frozen layout', (t) => {
  const now = edited((h) => h.replace(/( {2}void\* \(\*mem_alloc\)\(size_t size\);\n)( {2}void\* \(\*mem_realloc\)\(void\* ptr, size_t size\);\n)/, '$2$1'));
  const problems = problemsOf(frozen, now);
  t.true(problems.some((p) => p.startsWith('gsf_type_host_api: field 3 was "mem_alloc ')), problems.join('\n'));
});

test('a field inserted before others breaks it, even with a minor bump', (t) => {
  const now = edited((h) => bump(h.replace('  uint64_t tag;               /* @since 1.0 */\n', '  uint64_t extra;\n  uint64_t tag;               /* @since 1.0 */\n')));
  const problems = problemsOf(frozen, now);
  t.true(problems.some((p) => p.startsWith('gsf_type_event_info: field 3 was "tag 16 8"')), problems.join('\n'));
});

test('a changed constant breaks it', (t) => {
  const now = edited((h) => h.replace('GSF_EVENT_API = 4', 'GSF_EVENT_API = 5'));
  t.deepEqual(problemsOf(frozen, now), ['constant GSF_EVENT_API was 4, now 5']);
});

test('an append passes only with a minor bump', (t) => {
  // A new last field of the descriptor.
  const append = (h: string) => h.replace(/(\n\} gsf_type_plugin;)/, '\n  void* appended_for_test; /* @since 1.x */$1');
  const unbumped = problemsOf(frozen, edited(append));
  t.is(unbumped.length, 1);
  t.regex(unbumped[0]!, /^fields, structs or constants were appended without raising GSF_PLUGIN_ABI_MINOR above \d+$/);
  t.deepEqual(problemsOf(frozen, edited((h) => bump(append(h)))), []);
});
