/**
 * `gsf start --watch`, for development: reloads plugins when their files change. Every
 * plugin's folder is watched: a managed plugin's whole folder, a single-file plugin's file and
 * the objects/ folder beside it, a native plugin's library (where a rebuild writes it) and its
 * folder's objects/. A folder deleted and written again (a clean build) is watched again. Once
 * the changes have been quiet for `debounceMs`, every plugin whose source changed is reloaded,
 * as `POST /v1/plugins/reload` does. Edits that land while a reload runs are picked up by
 * another one right after it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log/logger.ts';
import { describeError } from '../errors.ts';
import { pluginFolder } from '../objects/schema.ts';
import { linksOut, type PluginSource } from './reload-source.ts';

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

/** What is watched of one plugin: a folder, how deep, and which changed paths in it count. */
interface WatchSpec {
  dir: string;
  recursive: boolean;
  counts(rel: string | null): boolean;
}

/** A declarations path relative to the watched folder: the objects/ folder or a file in it. */
const inObjects = (rel: string): boolean => rel === 'objects' || rel.startsWith(`objects${path.sep}`);

function watchSpec(source: PluginSource): WatchSpec {
  if (source.folder !== null) return { dir: source.folder, recursive: true, counts: relevant };
  if (source.kind === 'native') {
    // The plugin's folder holds gsf-plugin.json, objects/ and (often) build/, which a clean
    // build deletes and writes again.
    const dir = pluginFolder(source.file);
    const library = path.relative(dir, source.file);
    return { dir, recursive: true, counts: (rel) => rel === null || rel === library || inObjects(rel) };
  }
  // A single file: its folder may hold much else, so only the file and objects/ (watched apart) count.
  const file = path.basename(source.file);
  return { dir: path.dirname(source.file), recursive: false, counts: (rel) => rel === null || rel === file || inObjects(rel) };
}

/** The links of a managed plugin's folder that lead out of it; none when the folder cannot be read (logged). */
function linkedTargets(source: PluginSource, log: Logger): ReturnType<typeof linksOut> {
  try {
    return linksOut(source);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`--watch: cannot list the links in ${source.folder}: ${describeError(err)}`);
    return [];
  }
}

/** Starts watching; returns the function that stops it. */
export function watchPlugins(server: WatchedServer, log: Logger, debounceMs = WATCH_DEBOUNCE_MS): () => void {
  let timer: NodeJS.Timeout | null = null;
  let running = false;
  let again = false;
  // Once the watch is stopped (the server stops), no reload starts: not a waiting one, nor the
  // retry of one refused as busy, nor the run of edits that landed during the last one.
  let stopped = false;
  const run = (): void => {
    timer = null;
    if (stopped) return;
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
    if (stopped) return;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(run, debounceMs);
  };
  const watchers: Array<() => void> = [];
  const watch = (dir: string, recursive: boolean, onEvent: (rel: string | null) => void): fs.FSWatcher | null => {
    try {
      const watcher = fs.watch(dir, { recursive }, (_event, name) => onEvent(name === null ? null : String(name)));
      watcher.on('error', (err) => log.warn(`--watch: watching ${dir} failed: ${describeError(err)}`));
      return watcher;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`--watch: cannot watch ${dir}: ${describeError(err)}`);
      return null;
    }
  };
  let folders = 0;
  for (const source of server.pluginSources()) {
    const spec = watchSpec(source);
    let main: fs.FSWatcher | null = null;
    let objects: fs.FSWatcher | null = null;
    const open = (): void => {
      main?.close();
      main = watch(spec.dir, spec.recursive, (rel) => {
        if (!spec.counts(rel)) return;
        // objects/ beside a single file is watched apart: made or replaced, it is watched anew.
        if (!spec.recursive && rel === 'objects') openObjects();
        changed();
      });
      if (!spec.recursive) openObjects();
    };
    const openObjects = (): void => {
      objects?.close();
      objects = watch(path.join(spec.dir, 'objects'), false, () => changed());
    };
    open();
    if (main === null) {
      // Any other reason was logged by `watch` itself.
      if (!fs.existsSync(spec.dir)) log.warn(`--watch: cannot watch ${spec.dir}: it does not exist`);
    } else {
      folders++;
    }
    // The folder itself deleted and written again (a clean build): its parent sees it come back.
    const name = path.basename(spec.dir);
    const parent = spec.recursive ? watch(path.dirname(spec.dir), false, (rel) => {
      if (rel !== name) return;
      if (fs.existsSync(spec.dir)) open();
      changed();
    }) : null;
    // Files and folders linked into a managed plugin's folder from elsewhere (links made since
    // the watch started are seen at the next start).
    const linked: fs.FSWatcher[] = [];
    for (const link of linkedTargets(source, log)) {
      const base = path.basename(link.target);
      const watcher = link.folder
        ? watch(link.target, true, (rel) => { if (relevant(rel)) changed(); })
        : watch(path.dirname(link.target), false, (rel) => { if (rel === null || rel === base) changed(); });
      if (watcher !== null) linked.push(watcher);
    }
    watchers.push(() => {
      main?.close();
      objects?.close();
      parent?.close();
      for (const watcher of linked) watcher.close();
    });
  }
  log.info(`--watch: reloading plugins when their files change (${folders} folder(s))`);
  return () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    for (const close of watchers) close();
  };
}
