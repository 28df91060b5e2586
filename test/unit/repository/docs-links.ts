/**
 * Every relative link of the README, docs/, bench/README.md and native/README.md resolves: to a
 * file or folder of the repository, and for `#anchor` to a heading of the target as GitHub slugs it.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function markdownFiles(): string[] {
  const files = ['README.md', 'bench/README.md', 'native/README.md'];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) files.push(rel);
    }
  };
  walk('docs');
  return files;
}

/** The lines outside fenced code blocks. */
function prose(text: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^\s*(```|~~~)/.exec(line);
    if (m) {
      if (fence === null) fence = m[1]!;
      else if (line.trim().startsWith(fence)) fence = null;
      continue;
    }
    if (fence === null) out.push(line);
  }
  return out;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a file's headings, with GitHub's -1, -2 … for repeated ones. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(fs.readFileSync(file, 'utf8'))) {
    const m = /^#{1,6} (.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = githubSlug(m[1]!);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Relative link targets of a file's prose (code spans left out). */
function links(file: string): Array<{ line: number; target: string }> {
  const out: Array<{ line: number; target: string }> = [];
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const f = /^\s*(```|~~~)/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]!;
      else if (line.trim().startsWith(fence)) fence = null;
      return;
    }
    if (fence !== null) return;
    const bare = line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    for (const m of bare.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      out.push({ line: i + 1, target });
    }
  });
  return out;
}

test('GitHub slugs: punctuation and code marks dropped, spaces kept as hyphens', (t) => {
  t.is(githubSlug('Benchmark: `npm run bench -- cs-api`'), 'benchmark-npm-run-bench----cs-api');
  t.is(githubSlug('REST: `/v1/cluster/`'), 'rest-v1cluster');
  t.is(githubSlug('gsf — game-server framework for Node.js'), 'gsf--game-server-framework-for-nodejs');
  t.is(githubSlug("The example game's console"), 'the-example-games-console');
  t.is(githubSlug('Counters (SPEC 2.5, 8)'), 'counters-spec-25-8');
});

test('every relative link and anchor in the README, docs/ and the other READMEs resolves', (t) => {
  const files = markdownFiles();
  t.true(files.length >= 10, `found ${files.length} files`);
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const { line, target } of links(file)) {
      checked++;
      const hash = target.indexOf('#');
      const rel = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const resolved = rel === '' ? path.join(root, file) : path.resolve(root, path.dirname(file), decodeURIComponent(rel));
      const where = `${file}:${line}: ${target}`;
      if (!resolved.startsWith(root + path.sep) && resolved !== root) {
        broken.push(`${where} (outside the repository)`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === null) continue;
      if (!resolved.endsWith('.md')) {
        broken.push(`${where} (an anchor into a file that is not Markdown)`);
        continue;
      }
      if (!anchors(resolved).has(anchor)) broken.push(`${where} (no heading '#${anchor}' in ${path.relative(root, resolved)})`);
    }
  }
  t.true(checked > 50, `checked ${checked} links`);
  t.deepEqual(broken, []);
});
