/**
 * `gsf objects types [--manifest PATH] [--out FILE] [--check]`: writes (or, with --check,
 * verifies) the TypeScript declarations of the manifest's object types.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadManifest } from './config/manifest.ts';
import { resolvePluginFiles } from './plugins/loader.ts';
import { declarationFiles, objectFolders } from './objects/schema.ts';
import { GENERATED_FILE, GENERATED_HEADER, generateDeclarations } from './objects/typegen.ts';

export const OBJECTS_USAGE = `usage: gsf objects types [--manifest PATH] [--out FILE] [--check]
  writes gsf-objects.d.ts into every objects/ folder of the manifest and its plugins
  (--out: one .ts file for all types; --check: only report files that are out of date)
`;

/** Runs `gsf objects types` (`args` after `objects`, options already checked); returns the exit code. */
export function runObjectsCommand(args: string[], option: (name: string) => string | undefined, write: (text: string) => void): number {
  const out = option('--out');
  const check = args.includes('--check');
  const manifest = loadManifest(option('--manifest') ?? 'MANIFEST.json');
  const folders = objectFolders(manifest.dir, resolvePluginFiles(manifest));
  const files = declarationFiles(manifest.dir, resolvePluginFiles(manifest));
  const shown = (file: string): string => path.relative(process.cwd(), file) || file;
  if (out !== undefined && !out.endsWith('.ts')) {
    throw new Error(`--out must name a TypeScript file (.ts or .d.ts), got '${out}'`);
  }
  // Never over a file of the game's own (a plugin's source, say).
  if (out !== undefined && fs.existsSync(out) && !isGenerated(out)) {
    throw new Error(`--out: ${out} exists and was not written by gsf objects types; remove it or name another file`);
  }
  let stale = 0;
  // A folder whose declarations were all removed keeps a generated file that declares types
  // no longer there: it goes too (only a file this command wrote, by its first line).
  if (out === undefined) {
    for (const dir of folders) {
      const file = path.join(dir, GENERATED_FILE);
      if (files.some((f) => path.dirname(f) === dir) || !isGenerated(file)) continue;
      if (check) {
        stale++;
        write(`out of date: ${shown(file)} (its folder declares no object types any more; run gsf objects types)\n`);
      } else {
        fs.rmSync(file);
        write(`removed ${shown(file)} (its folder declares no object types any more)\n`);
      }
    }
  }
  if (files.length === 0) {
    write(`no object declarations (objects/*.json) next to ${manifest.file} or in its plugins\n`);
    return stale > 0 ? 1 : 0;
  }
  for (const g of generateDeclarations(files, out)) {
    const current = fs.existsSync(g.file) ? fs.readFileSync(g.file, 'utf8') : null;
    if (current === g.text) {
      write(`up to date: ${shown(g.file)}\n`);
    } else if (check) {
      stale++;
      write(`out of date: ${shown(g.file)} (run gsf objects types)\n`);
    } else {
      fs.writeFileSync(g.file, g.text);
      write(`wrote ${shown(g.file)}\n`);
    }
  }
  return stale > 0 ? 1 : 0;
}

function isGenerated(file: string): boolean {
  try {
    return fs.statSync(file).isFile() && fs.readFileSync(file, 'utf8').startsWith(GENERATED_HEADER);
  } catch {
    return false;
  }
}
