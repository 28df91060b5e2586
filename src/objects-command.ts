/**
 * `gsf objects types [--manifest PATH] [--out FILE] [--check]`: writes (or, with --check,
 * verifies) the TypeScript declarations of the manifest's object types.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadManifest } from './config/manifest.ts';
import { resolvePluginFiles } from './plugins/loader.ts';
import { declarationFiles } from './objects/schema.ts';
import { generateDeclarations } from './objects/typegen.ts';

export const OBJECTS_USAGE = `usage: gsf objects types [--manifest PATH] [--out FILE] [--check]
  writes gsf-objects.d.ts into every objects/ folder of the manifest and its plugins
  (--out: one file for all types; --check: only report files that are out of date)
`;

/** Runs the command; returns the exit code. */
export function runObjectsCommand(args: string[], option: (name: string) => string | undefined, write: (text: string) => void): number {
  if (args[0] !== 'types') {
    write(OBJECTS_USAGE);
    return 2;
  }
  const manifest = loadManifest(option('--manifest') ?? 'MANIFEST.json');
  const files = declarationFiles(manifest.dir, resolvePluginFiles(manifest));
  if (files.length === 0) {
    write(`no object declarations (objects/*.json) next to ${manifest.file} or in its plugins\n`);
    return 0;
  }
  const check = args.includes('--check');
  let stale = 0;
  for (const g of generateDeclarations(files, option('--out'))) {
    const shown = path.relative(process.cwd(), g.file) || g.file;
    const current = fs.existsSync(g.file) ? fs.readFileSync(g.file, 'utf8') : null;
    if (current === g.text) {
      write(`up to date: ${shown}\n`);
    } else if (check) {
      stale++;
      write(`out of date: ${shown} (run gsf objects types)\n`);
    } else {
      fs.writeFileSync(g.file, g.text);
      write(`wrote ${shown}\n`);
    }
  }
  return stale > 0 ? 1 : 0;
}
