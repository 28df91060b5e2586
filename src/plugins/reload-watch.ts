/**
 * `gsf start --watch`, for development: reloads plugins when their files change. Every
 * plugin's folder is watched (a native plugin's: the folder of its library, where a rebuild
 * writes it); once the changes have been quiet for `debounceMs`, every plugin whose source
 * changed is reloaded, as `POST /v1/plugins/reload` does. Edits that land while a reload runs
 * are picked up by another one right after it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log/logger.ts';
import { describeError } from '../errors.ts';
import type { PluginSource } from './reload-source.ts';

/** Changes are gathered until none came for this long (editors write files in several steps). */
export const WATCH_DEBOUNCE_MS = 300;

/** What the watcher needs of the server. */
export interface WatchedServer {
  /** The running plugins' sources. */
  pluginSources(): PluginSource[];
  /** Reloads every changed plugin and logs the outcome; resolves when done ('busy': another reload was running). */
  reloadInBackground(why: string): Promise<unknown>;
}

/** Whether a changed path (relative to the watched folder) can be part of a plugin's source. */
function relevant(rel: string | null): boolean {
  if (rel === null) return true;
  return !rel.split(path.sep).some((part) => part === 'node_modules' || part.startsWith('.'));
}

/** Starts watching; returns the function that stops it. */
export function watchPlugins(server: WatchedServer, log: Logger, debounceMs = WATCH_DEBOUNCE_MS): () => void {
  const watchers: fs.FSWatcher[] = [];
  let timer: NodeJS.Timeout | null = null;
  let running = false;
  let again = false;
  const run = (): void => {
    timer = null;
    if (running) {
      again = true;
      return;
    }
    running = true;
    void server.reloadInBackground('file change').then((outcome) => {
      // Refused because another reload (an operator's POST, a SIGHUP) was running: the changes
      // are still to load, so try again once edits and that reload have had time to settle.
      if (outcome === 'busy') changed();
    }).finally(() => {
      running = false;
      if (again) {
        again = false;
        run();
      }
    });
  };
  const changed = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(run, debounceMs);
  };
  for (const source of server.pluginSources()) {
    const dir = source.folder ?? path.dirname(source.file);
    const single = source.folder === null ? path.basename(source.file) : null;
    try {
      const watcher = fs.watch(dir, { recursive: single === null }, (_event, name) => {
        const rel = name === null ? null : String(name);
        if (single !== null ? rel === null || rel === single : relevant(rel)) changed();
      });
      watcher.on('error', (err) => log.warn(`--watch: watching ${dir} failed: ${describeError(err)}`));
      watchers.push(watcher);
    } catch (err) {
      log.warn(`--watch: cannot watch ${dir}: ${describeError(err)}`);
    }
  }
  log.info(`--watch: reloading plugins when their files change (${watchers.length} folder(s))`);
  return () => {
    if (timer !== null) clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
