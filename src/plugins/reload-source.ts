/**
 * A plugin's source on disk, as a reload sees it (main thread): which files are the plugin's
 * own, a hash of them, dropping its modules from this thread's module cache, and fresh copies
 * of rebuilt native libraries.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pluginFolder } from '../objects/schema.ts';
import { ENTRY_FILES } from './loader.ts';
import { parseJsonText } from '../config/json-text.ts';

/** Where a plugin's files are: a folder (a managed plugin's entry file is its index) or one file. */
export interface PluginSource {
  kind: 'managed' | 'native';
  /** The entry file (managed) or the library the manifest names (native). */
  file: string;
  /** The plugin's folder for a managed plugin whose entry is `<folder>/index.*`, else null (the file alone). */
  folder: string | null;
}

/** The source of a resolved plugin file. */
export function pluginSource(kind: 'managed' | 'native', file: string): PluginSource {
  const folder = kind === 'managed' && ENTRY_FILES.includes(path.basename(file)) ? path.dirname(file) : null;
  return { kind, file, folder };
}

/** Folders never hashed or reloaded: packages and hidden folders (`.git`, editors' files). */
function skipped(name: string): boolean {
  return name === 'node_modules' || name.startsWith('.');
}

/** A symbolic link in a plugin's folder that leads out of it: its target's real path. */
export interface LinkOut {
  target: string;
  folder: boolean;
}

/**
 * The files under `folder` but `node_modules` and hidden ones, and the links that lead out of
 * it. A symbolic link counts as what it points at (a module shared between plugins, as
 * monorepos link them): a linked file is a file of the folder, a linked folder is walked, and
 * a link back to a folder being walked is not followed again. A link to nothing is no file.
 */
function walkFolder(folder: string): { files: string[]; linksOut: LinkOut[] } {
  const files: string[] = [];
  const linksOut: LinkOut[] = [];
  const realFolder = realPath(folder);
  const walk = (dir: string, walking: ReadonlySet<string>): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (skipped(entry.name)) continue;
      const full = path.join(dir, entry.name);
      let kind: fs.Stats | fs.Dirent = entry;
      if (entry.isSymbolicLink()) {
        try {
          kind = fs.statSync(full);
        } catch {
          continue;
        }
        const target = realPath(full);
        const rel = path.relative(realFolder, target);
        if (rel.startsWith('..') || path.isAbsolute(rel)) linksOut.push({ target, folder: kind.isDirectory() });
      }
      if (kind.isDirectory()) {
        const real = realPath(full);
        if (!walking.has(real)) walk(full, new Set([...walking, real]));
      } else if (kind.isFile()) {
        files.push(full);
      }
    }
  };
  walk(folder, new Set([realFolder]));
  return { files: files.sort(), linksOut };
}

/** The plugin's files, sorted: every file under its folder but `node_modules` and hidden ones (see `walkFolder`), or the file alone. */
export function sourceFiles(source: PluginSource): string[] {
  if (source.folder === null) return fs.existsSync(source.file) ? [source.file] : [];
  return walkFolder(source.folder).files;
}

/** The symbolic links in a managed plugin's folder that lead out of it (`--watch` watches their targets too). */
export function linksOut(source: PluginSource): LinkOut[] {
  return source.folder === null ? [] : walkFolder(source.folder).linksOut;
}

/** What a reload compares: the hash of all the plugin's files, and of its object declarations alone. */
export interface SourceHash {
  hash: string;
  /** Object declarations (`objects/*.json`) take effect at start only: a reload refuses to change them. */
  objectsHash: string;
}

/** A declarations file's JSON without its layout (white space), or its bytes when it is not JSON. */
function declarationText(bytes: Buffer): Buffer | string {
  try {
    return JSON.stringify(parseJsonText(bytes.toString('utf8')));
  } catch {
    return bytes;
  }
}

/**
 * Hashes the plugin's files (names relative to its folder, and contents) with SHA-256. `copy`,
 * for a single-file source, is a copy of the file to read instead (what a reload loads).
 */
export function hashSource(source: PluginSource, copy?: string): SourceHash {
  const all = createHash('sha256');
  const objects = createHash('sha256');
  const base = source.folder ?? path.dirname(source.file);
  // Where the start reads the plugin's object types (objectFolders): its folder's objects/; for a
  // single file the one beside it, for a native library built into <folder>/build/ <folder>'s.
  const declared = path.join(source.folder ?? pluginFolder(source.file), 'objects');
  const files = source.folder === null ? [...sourceFiles(source), ...declarationFiles(declared)] : sourceFiles(source);
  for (const file of files) {
    const rel = path.relative(base, file);
    const bytes = fs.readFileSync(copy !== undefined && file === source.file ? copy : file);
    const declaration = path.dirname(file) === declared && file.endsWith('.json');
    all.update(rel).update('\0').update(String(bytes.length)).update('\0').update(bytes);
    if (declaration) {
      // What the file declares, not how it is laid out: a file only reformatted is no change.
      const declared = declarationText(bytes);
      objects.update(rel).update('\0').update(String(declared.length)).update('\0').update(declared);
    }
  }
  return { hash: all.digest('hex'), objectsHash: objects.digest('hex') };
}

/**
 * The first managed plugin whose files on disk are not the ones it runs (`hash`), or whose
 * files cannot be read; `except`: names not looked at. Null when there is none.
 */
export function changedOnDisk<P extends { name: string; source: PluginSource; hash: string }>(plugins: Iterable<P>, except: ReadonlySet<string>): P | null {
  for (const p of plugins) {
    if (p.source.kind !== 'managed' || except.has(p.name)) continue;
    try {
      if (hashSource(p.source).hash !== p.hash) return p;
    } catch {
      return p;
    }
  }
  return null;
}

/** The declaration files (`*.json`) in `dir`, an objects/ folder, sorted. */
function declarationFiles(dir: string): string[] {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return [];
  return fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort().map((n) => path.join(dir, n));
}

/** Modules taken out of this thread's module cache, to put back if the reload fails. */
export type SavedModules = Map<string, NodeJS.Module>;

/** `p` with its symbolic links resolved (as Node's module cache names files), or as given if it is gone. */
function realPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * Whether a module cache key is one of the plugin's own files. The cache names files by their
 * real path, so a plugin listed through a symbolic link is compared by its real folder too, and
 * a file linked into the folder by its target (`linked`).
 */
function isPluginModule(source: PluginSource, key: string, realFolder: string | null, realFile: string, linked: ReadonlySet<string>): boolean {
  if (source.folder === null) return key === source.file || key === realFile;
  if (linked.has(key)) return true;
  for (const folder of realFolder === source.folder ? [source.folder] : [source.folder, realFolder!]) {
    const rel = path.relative(folder, key);
    if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) && !rel.split(path.sep).some(skipped)) return true;
  }
  return false;
}

/**
 * Drops the plugin's own modules (its folder's files, not its packages) from this thread's
 * module cache, so the next `require` compiles them from disk again. Returns what was dropped.
 */
export function dropModules(source: PluginSource): SavedModules {
  const cache = createRequire(import.meta.url).cache;
  const saved: SavedModules = new Map();
  const realFolder = source.folder === null ? null : realPath(source.folder);
  const realFile = realPath(source.file);
  // Files the folder links to from elsewhere are cached under their real path, outside it.
  const linked = new Set(source.folder === null ? [] : sourceFiles(source).map(realPath));
  for (const key of Object.keys(cache)) {
    if (!isPluginModule(source, key, realFolder, realFile, linked)) continue;
    saved.set(key, cache[key]!);
    delete cache[key];
  }
  return saved;
}

/** Puts back modules `dropModules` took (a failed reload), dropping what the attempt loaded. */
export function restoreModules(source: PluginSource, saved: SavedModules): void {
  dropModules(source);
  const cache = createRequire(import.meta.url).cache;
  for (const [key, mod] of saved) cache[key] = mod;
}

let copiesDir: string | null = null;
let copies = 0;

/** Tries at copying a library that changes while it is copied, before the reload is refused. */
const COPY_TRIES = 3;
/** Pause between those tries, ms. */
const COPY_RETRY_MS = 100;

function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

/**
 * Copies a rebuilt native library to a private path of its own (a folder only this user may
 * read): a library is loaded once per path and never unloaded, so new code needs a new file,
 * and what gets loaded is then a file nobody writes to any more. A library that changes while
 * it is copied (a build still writing it) is copied again after a pause, and refused when it
 * keeps changing. The copy stays while event threads may load it.
 */
export async function copyLibrary(file: string, plugin: string): Promise<string> {
  copiesDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-native-reload-'));
  const copy = path.join(copiesDir, `${plugin.replace(/[^\w.-]/g, '_')}-${++copies}${path.extname(file)}`);
  for (let tried = 1; ; tried++) {
    const before = fs.statSync(file);
    fs.copyFileSync(file, copy);
    const after = fs.statSync(file);
    if (sameFile(before, after) && fs.statSync(copy).size === after.size) {
      fs.chmodSync(copy, 0o500);
      return copy;
    }
    fs.rmSync(copy, { force: true });
    if (tried === COPY_TRIES) {
      throw new Error(`${file} changed while it was being copied, ${COPY_TRIES} times (is a build still writing it?): reload once it is complete`);
    }
    await new Promise((resolve) => setTimeout(resolve, COPY_RETRY_MS));
  }
}

/** Deletes a copy no pool loads any more (the mapping of a loaded copy stays valid). */
export function removeCopy(copy: string): void {
  if (copiesDir !== null && path.dirname(copy) === copiesDir) fs.rmSync(copy, { force: true });
}

/** Deletes every copy (the server stopped). */
export function removeCopies(): void {
  if (copiesDir !== null) fs.rmSync(copiesDir, { recursive: true, force: true });
  copiesDir = null;
}
