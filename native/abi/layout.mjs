#!/usr/bin/env node
/**
 * Freezes the layout of the plugin ABI (native/include/gsf_plugin.h): every struct's field
 * offsets and sizes in declaration order, and every enum constant's value, as a C compiler sees
 * them. Compared with the frozen copy (native/abi/gsf_plugin.layout), a change passes only when
 * it appends: new fields at the end of a struct, new structs, new constants, and then only with
 * a higher GSF_PLUGIN_ABI_MINOR than the frozen one.
 *
 *   node native/abi/layout.mjs            check the header against the frozen copy
 *   node native/abi/layout.mjs --update   check, then write the header's layout as the frozen copy
 *   node native/abi/layout.mjs --header H --frozen F   another header or frozen copy (tests)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Structs (name and field names in order) and enum constants declared in a header's text. */
export function parseHeader(text) {
  // Comments and preprocessor lines (#if GSF_TARGET_ABI_MINOR >= k around the fields of a minor) go.
  const source = text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/.*$/gm, '').replace(/^\s*#\s*(?:if|ifdef|ifndef|elif|else|endif)\b.*$/gm, ' ');
  const structs = [];
  for (const m of source.matchAll(/typedef\s+struct\s+(\w+)\s*\{([\s\S]*?)\}\s*\1\s*;/g)) {
    const fields = [];
    for (const decl of m[2].split(';')) {
      const d = decl.replace(/\s+/g, ' ').trim();
      if (d === '') continue;
      const fn = /\(\s*\*\s*(\w+)\s*\)/.exec(d);
      const plain = /(\w+)\s*(\[[^\]]*\])?$/.exec(d);
      const name = fn ? fn[1] : plain?.[1];
      if (!name) throw new Error(`cannot read a field of ${m[1]}: ${d}`);
      fields.push(name);
    }
    structs.push({ name: m[1], fields });
  }
  const constants = [];
  for (const m of source.matchAll(/enum\s*(?:\w+\s*)?\{([^}]*)\}/g)) {
    for (const item of m[1].split(',')) {
      const name = /^\s*(GSF_\w+)/.exec(item)?.[1];
      if (name) constants.push(name);
    }
  }
  const minor = Number(/#define\s+GSF_PLUGIN_ABI_MINOR\s+(\d+)/.exec(source)?.[1]);
  const major = Number(/#define\s+GSF_PLUGIN_ABI_MAJOR\s+(\d+)/.exec(source)?.[1]);
  return { structs, constants, major, minor };
}

/** The layout as the C compiler lays it out: lines `struct NAME SIZE`, `field NAME.F OFFSET SIZE`, `const NAME VALUE`. */
export function measure(headerPath) {
  const parsed = parseHeader(fs.readFileSync(headerPath, 'utf8'));
  const lines = ['#include <stddef.h>', '#include <stdio.h>', `#include "${path.resolve(headerPath)}"`, 'int main(void) {'];
  lines.push(`  printf("abi ${parsed.major} ${parsed.minor}\\n");`);
  for (const s of parsed.structs) {
    lines.push(`  printf("struct ${s.name} %zu\\n", sizeof(${s.name}));`);
    for (const f of s.fields) {
      lines.push(`  printf("field ${s.name}.${f} %zu %zu\\n", offsetof(${s.name}, ${f}), sizeof(((${s.name}*)0)->${f}));`);
    }
  }
  for (const c of parsed.constants) lines.push(`  printf("const ${c} %lld\\n", (long long)${c});`);
  lines.push('  return 0;', '}');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-abi-'));
  try {
    fs.writeFileSync(path.join(dir, 'layout.c'), lines.join('\n') + '\n');
    execFileSync(process.env.CC ?? 'cc', ['-std=c99', '-o', path.join(dir, 'layout'), path.join(dir, 'layout.c')], { stdio: 'pipe' });
    return execFileSync(path.join(dir, 'layout'), { encoding: 'utf8' }).trim().split('\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What breaks the frozen layout in `now`; an empty list when `now` only appends (with a minor bump). */
export function compare(frozen, now) {
  const read = (lines) => {
    const abi = lines.find((l) => l.startsWith('abi '))?.split(' ').map(Number) ?? [];
    const structs = new Map(), constants = new Map();
    for (const l of lines) {
      const [kind, name, ...rest] = l.split(' ');
      if (kind === 'struct') structs.set(name, { size: rest[0], fields: [] });
      else if (kind === 'field') structs.get(name.split('.')[0]).fields.push(`${name.split('.')[1]} ${rest.join(' ')}`);
      else if (kind === 'const') constants.set(name, rest[0]);
    }
    return { major: abi[1], minor: abi[2], structs, constants };
  };
  const a = read(frozen), b = read(now);
  const problems = [];
  let appended = false;
  if (a.major !== b.major) problems.push(`GSF_PLUGIN_ABI_MAJOR changed from ${a.major} to ${b.major}`);
  if (b.minor < a.minor) problems.push(`GSF_PLUGIN_ABI_MINOR went down from ${a.minor} to ${b.minor}`);
  for (const [name, s] of a.structs) {
    const t = b.structs.get(name);
    if (!t) { problems.push(`struct ${name} was removed`); continue; }
    s.fields.forEach((f, i) => {
      if (t.fields[i] !== f) problems.push(`${name}: field ${i} was "${f}" (name offset size), now "${t.fields[i] ?? 'missing'}"`);
    });
    if (t.fields.length > s.fields.length) appended = true;
  }
  for (const name of b.structs.keys()) if (!a.structs.has(name)) appended = true;
  for (const [name, v] of a.constants) {
    if (!b.constants.has(name)) problems.push(`constant ${name} was removed`);
    else if (b.constants.get(name) !== v) problems.push(`constant ${name} was ${v}, now ${b.constants.get(name)}`);
  }
  for (const name of b.constants.keys()) if (!a.constants.has(name)) appended = true;
  if (appended && b.minor <= a.minor) {
    problems.push(`fields, structs or constants were appended without raising GSF_PLUGIN_ABI_MINOR above ${a.minor}`);
  }
  return problems;
}

function main() {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
  const header = opt('--header', path.join(here, '..', 'include', 'gsf_plugin.h'));
  const frozenPath = opt('--frozen', path.join(here, 'gsf_plugin.layout'));
  const now = measure(header);
  const frozen = fs.readFileSync(frozenPath, 'utf8').trim().split('\n').filter((l) => !l.startsWith('#'));
  const problems = compare(frozen, now);
  if (problems.length > 0) {
    console.error(`gsf_plugin.h breaks the frozen ABI layout (${frozenPath}): only appends, with a minor bump, are allowed:`);
    for (const p of problems) console.error(`  - ${p}`);
    process.exit(1);
  }
  if (args.includes('--update')) {
    const head = '# The frozen layout of native/include/gsf_plugin.h (native/abi/layout.mjs). Appends only.\n';
    fs.writeFileSync(frozenPath, head + now.join('\n') + '\n');
    console.log(`wrote ${frozenPath}`);
  } else if (frozen.join('\n') !== now.join('\n')) {
    console.log('gsf_plugin.h appends to the frozen layout: run `node native/abi/layout.mjs --update` to freeze it');
  } else {
    console.log('gsf_plugin.h matches its frozen layout');
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
