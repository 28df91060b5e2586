/**
 * How plugin modules are loaded, the same way on every thread and wherever they live on disk.
 *
 * - Through tsx's CommonJS hook. On Node 20, TypeScript ESM loader hooks do not reach worker
 *   threads, so workers must `require` plugins; the main thread does the same, so a plugin that
 *   loads on one thread loads on all of them, whatever `"type"` its nearest package.json gives it
 *   (or none: a plugin folder anywhere on disk). Plugins therefore cannot use top-level await.
 * - `gsf` and `gsf/sdk` (and paths to their entry files) are the running server's own modules,
 *   not a second copy compiled for `require`: a plugin gets the same `GsfError` class and the
 *   same constants as the server, and needs no `node_modules/gsf` of its own.
 */
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModule } from '../load-module.ts';

type LoadFn = (request: string, parent: { filename?: string | null } | null | undefined, isMain: boolean) => unknown;
interface ModuleInternals {
  _load: LoadFn;
  _extensions: Record<string, unknown>;
}

const srcDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The package's public entry points (package.json `exports`) and the files they name. */
const PUBLIC_ENTRIES: ReadonlyArray<[string, string]> = [
  ['gsf', path.join(srcDir, 'index.ts')],
  ['gsf/sdk', path.join(srcDir, 'sdk', 'index.ts')],
];

const byName = new Map<string, unknown>();
const byFile = new Map<string, unknown>();
let prepared: Promise<void> | null = null;

/** The running server's module for `request` made from `parent`, if it names a public entry. */
function publicModule(request: string, parent: { filename?: string | null } | null | undefined): unknown {
  const named = byName.get(request);
  if (named !== undefined) return named;
  if (!(request.startsWith('.') || path.isAbsolute(request)) || !parent?.filename) return undefined;
  const target = path.resolve(path.dirname(parent.filename), request);
  return byFile.get(target) ?? byFile.get(`${target}.ts`) ?? byFile.get(path.join(target, 'index.ts'));
}

async function prepare(): Promise<void> {
  const internals = Module as unknown as ModuleInternals;
  if (internals._extensions['.ts'] === undefined) {
    // Started without tsx's CommonJS hook (e.g. `node --import tsx/esm`): add it.
    const { register } = await import('tsx/cjs/api');
    register();
  }
  for (const [name, file] of PUBLIC_ENTRIES) {
    // This thread's instance of the entry: CommonJS where gsf runs through tsx's require hook (the
    // gsf command, event workers, which piscina loads with require), else ES modules.
    const namespace = await loadModule<unknown>(import.meta.url, file);
    byName.set(name, namespace);
    byFile.set(file, namespace);
  }
  // Module._load is where every require() of a CommonJS module goes; answering the public
  // entries there keeps tsx from compiling a second, CommonJS copy of the server for plugins.
  const load = internals._load;
  internals._load = function loadWithPublicEntries(this: unknown, request, parent, isMain) {
    return publicModule(request, parent) ?? load.call(this, request, parent, isMain);
  };
}

/** Loads a plugin module on this thread (see the file comment for how). */
export async function requirePlugin(file: string): Promise<Record<string, unknown>> {
  prepared ??= prepare();
  await prepared;
  return createRequire(import.meta.url)(file) as Record<string, unknown>;
}

/** Why a plugin module failed to load, in a plugin author's terms. */
export function explainLoadError(err: unknown, file: string): string {
  const e = err as { code?: string; message?: string; requireStack?: string[] } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const firstLine = message.split('\n').find((l) => l.trim() !== '' && !l.startsWith('Transform failed')) ?? message;
  if (e?.code === 'ERR_REQUIRE_ASYNC_MODULE' || /top-level await/i.test(message)) {
    return `${firstLine.replace(/: ERROR: .*/, '')} uses top-level await, which plugins cannot use: gsf loads plugins `
      + 'with require() on every thread. Move the await into register() or an api.onStart() hook.';
  }
  if (message.startsWith('Transform failed')) return `cannot compile: ${firstLine}`;
  if (e?.code === 'MODULE_NOT_FOUND') {
    const missing = /Cannot find module '([^']+)'/.exec(message)?.[1] ?? '?';
    const from = e.requireStack?.[0] ?? file;
    const hint = missing.startsWith('.') || path.isAbsolute(missing)
      ? 'check the path (TypeScript imports name the .ts file)'
      : `install it where the plugin can find it (npm install ${missing.startsWith('@') ? missing.split('/').slice(0, 2).join('/') : missing.split('/')[0]} in the game project)`;
    return `cannot find module '${missing}' imported by ${from}: ${hint}`;
  }
  if (e?.code === 'ERR_REQUIRE_ESM') {
    return `${firstLine} (an ES module with top-level await or an ESM-only loader cannot be required by a plugin)`;
  }
  // Node's parser (a .js file) or the module's own code at load: which file, and its first line.
  if (err instanceof SyntaxError) return `cannot compile: ${file}: ${firstLine}`;
  return `${file} threw while it loaded: ${firstLine}`;
}
