/**
 * Loads one of gsf's own modules on demand, the way gsf itself was loaded. Under tsx's require
 * hook (the `gsf` command, the test runs, event threads) gsf runs as CommonJS, where an import()
 * would load a second instance of the module and everything it imports through the ES module
 * loader; loaded as ES modules (an embedder's `--import tsx`), it is an import().
 */
import { createRequire } from 'node:module';

const RUNS_AS_COMMONJS = typeof require === 'function';

/** The module `specifier` names relative to `from` (the caller's `import.meta.url`). */
export async function loadModule<T>(from: string, specifier: string): Promise<T> {
  if (RUNS_AS_COMMONJS) return createRequire(from)(specifier) as T;
  return await import(new URL(specifier, from).href) as T;
}
