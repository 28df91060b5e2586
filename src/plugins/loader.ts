/**
 * Finds plugin modules, imports them and runs their `register` functions, with an error that
 * names the plugin for every way a plugin can be wrong.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GsfError, PluginError, gsfError } from '../errors.ts';
import type { Manifest } from '../config/manifest.ts';
import { createPluginApi, type RegistrationContext } from './api.ts';
import type { PluginDefinition } from './types.ts';
import { explainLoadError, requirePlugin } from './plugin-modules.ts';
import { declareNativeTargets, isNativeLibrary, nativeLibraryOf } from './native-files.ts';
import { loadModule } from '../load-module.ts';

/** The entry file of a plugin folder, the first of these that exists. */
export const ENTRY_FILES = ['index.ts', 'index.mts', 'index.js', 'index.mjs'];

/** A module file a plugin entry may name. */
const MODULE_FILE = /\.[mc]?[jt]s$/;

/** A plugin's label in messages: its folder (or file) name. */
export function pluginLabel(file: string): string {
  const base = path.basename(file);
  return ENTRY_FILES.includes(base) ? path.basename(path.dirname(file)) : base.replace(/\.[mc]?[jt]s$/, '');
}

/**
 * Resolves the manifest's plugin entries to module files (or native libraries: a folder with a
 * gsf-plugin.json, or a path to a .so). A bare name is a folder under `<manifest dir>/plugins/`;
 * anything with a slash is a path relative to the manifest.
 * Without a `plugins` list, every folder under `<manifest dir>/plugins/` loads, in name order.
 */
export function resolvePluginFiles(manifest: Pick<Manifest, 'dir' | 'plugins' | 'file'>): string[] {
  const pluginsDir = path.join(manifest.dir, 'plugins');
  let entries = manifest.plugins;
  if (entries === null) {
    if (!fs.existsSync(pluginsDir)) return [];
    entries = fs.readdirSync(pluginsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.') && !d.name.startsWith('_'))
      .map((d) => d.name)
      .sort();
  }
  return entries.map((entry) => {
    const target = entry.includes('/') || entry.startsWith('.') ? path.resolve(manifest.dir, entry) : path.join(pluginsDir, entry);
    if (fs.existsSync(target) && fs.statSync(target).isDirectory()) {
      const library = nativeLibraryOf(target);
      if (library !== null) return library;
      const file = ENTRY_FILES.map((f) => path.join(target, f)).find((f) => fs.existsSync(f));
      if (!file) throw gsfError('GSF_ERR_PLUGIN_LOAD', entry, `no ${ENTRY_FILES.join(', ')} in ${target}`);
      return file;
    }
    if (fs.existsSync(target)) {
      // Another file would be run as JavaScript, and fail with a parser's words about its text.
      if (MODULE_FILE.test(target) || isNativeLibrary(target)) return target;
      throw gsfError('GSF_ERR_PLUGIN_LOAD', entry, `${target} is not a plugin: list a folder (with an index.ts, index.js, … `
        + `or a gsf-plugin.json), a module file (.ts, .mts, .cts, .js, .mjs, .cjs) or a native library (listed in ${manifest.file})`);
    }
    throw gsfError('GSF_ERR_PLUGIN_LOAD', entry, `not found at ${target} (listed in ${manifest.file})`);
  });
}

/**
 * The folders under `<manifest dir>/plugins/` that a manifest with a `plugins` list leaves out
 * (by name, sorted): they are not loaded, which a start says, so a plugin added there and not
 * listed is not silently missing.
 */
export function unlistedPluginFolders(manifest: Pick<Manifest, 'dir' | 'plugins'>): string[] {
  const listed = manifest.plugins;
  const pluginsDir = path.join(manifest.dir, 'plugins');
  if (listed === null || !fs.existsSync(pluginsDir)) return [];
  const named = new Set(listed.map((entry) => path.resolve(entry.includes('/') || entry.startsWith('.') ? manifest.dir : pluginsDir, entry)));
  return fs.readdirSync(pluginsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.') && !d.name.startsWith('_') && !named.has(path.join(pluginsDir, d.name)))
    .map((d) => d.name)
    .sort();
}

/** Imports a plugin module and checks its export. */
export async function importPlugin(file: string): Promise<PluginDefinition> {
  const label = pluginLabel(file);
  let mod: Record<string, unknown>;
  try {
    mod = await requirePlugin(file);
  } catch (err) {
    // The cause in words a plugin author understands; the original error stays as its cause.
    throw new PluginError(label, 'load', new Error(explainLoadError(err, file), { cause: err }), { code: 'GSF_ERR_PLUGIN_LOAD' });
  }
  const def = mod.default as Partial<PluginDefinition> | undefined;
  const bad = (what: string): GsfError => gsfError('GSF_ERR_PLUGIN_EXPORT', label, file, what);
  if (def === undefined || def === null) throw bad('has no default export; write `export default definePlugin({ name, version, register })`');
  if (typeof def !== 'object') throw bad(`default export must be a plugin definition object, got ${typeof def}`);
  if (typeof def.name !== 'string' || def.name === '') throw bad("definition needs a non-empty string 'name'");
  if (typeof def.version !== 'string' || def.version === '') throw bad("definition needs a non-empty string 'version'");
  if (typeof def.register !== 'function') throw bad("definition needs a 'register(api)' function");
  return def as PluginDefinition;
}

export interface LoadedPlugin {
  name: string;
  version: string;
  file: string;
}

/** The native plugin host, loaded on a thread once it has a native plugin. */
const nativeHost = (): Promise<typeof import('./native-loader.ts')> => loadModule(import.meta.url, './native-loader.ts');

/** Imports and registers every plugin on this thread. */
export async function loadPlugins(files: string[], reg: RegistrationContext): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = [];
  const names = new Map<string, string>();
  reg.registering = true;
  try {
    for (const file of files) {
      const def = isNativeLibrary(file) ? (await nativeHost()).nativePluginDefinition(file, reg.runtime) : await importPlugin(file);
      const previous = names.get(def.name);
      if (previous !== undefined) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', pluginLabel(file), 'plugin name', def.name, previous);
      names.set(def.name, pluginLabel(file));
      try {
        await def.register(createPluginApi(def.name, reg));
      } catch (err) {
        if (err instanceof GsfError && err.code !== 'GSF_ERR_BAD_ARGUMENT' && err.code !== 'GSF_ERR_UNKNOWN_EVENT') throw err;
        throw new PluginError(def.name, 'register', err);
      }
      loaded.push({ name: def.name, version: def.version, file });
    }
    declareNativeTargets(reg.runtime);
  } finally {
    reg.registering = false;
  }
  return loaded;
}
