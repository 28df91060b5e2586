/**
 * The object store of a running server (main thread): loads the declarations, brings the
 * database's tables up to date, publishes the settings, starts the writer thread, and at stop
 * lets the writer commit everything queued before it closes.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';
import type { Manifest } from '../config/manifest.ts';
import type { Logger } from '../log/logger.ts';
import { logFileOf } from '../log/log-file.ts';
import { workerExecArgv } from '../events/main/dispatcher.ts';
import { counterRegistry } from '../counters/registry.ts';
import { declarationFiles, loadSchema } from './schema.ts';
import { clusterNeedsPostgres, databaseLabel, publishConfig, storeConfig, type StoreConfig } from './config.ts';
import { syncSqliteSchema } from './sqlite-store.ts';
import { syncPostgresSchema } from './postgres-store.ts';
import { defineStoredCounters } from './stats.ts';
import { registerObjectCounters } from './counters.ts';
import { closeThreadStore, threadStore } from './thread-store.ts';
import type { CommittedObjects, WriterCommand, WriterEvent, WriterInit } from './writer/messages.ts';

const WRITER_FILE = fileURLToPath(new URL('./writer/thread.ts', import.meta.url));
const WRITER_BOOT = fileURLToPath(new URL('./writer/boot.mjs', import.meta.url));

export interface ObjectStore {
  readonly config: StoreConfig;
  /**
   * Lets the writer commit what it has queued, then closes it; after `limitMs` (a commit that
   * waits on a lock held elsewhere) the writer is ended without waiting more.
   */
  stop(limitMs?: number): Promise<void>;
  /** An event thread ended: the writer lets go of its channel. */
  threadEnded(threadId: number): void;
}

let commitListener: ((objects: CommittedObjects) => void) | null = null;

/** Hears what every durable commit group changed (the Cluster component; null: nobody). */
export function onObjectCommits(listener: ((objects: CommittedObjects) => void) | null): void {
  commitListener = listener;
}

function nextEvent(worker: Worker): Promise<WriterEvent> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: WriterEvent): void => {
      if ('committed' in m) return;
      cleanup();
      resolve(m);
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`the writer thread exited (code ${code})`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/**
 * Starts the store when any object type is declared (objects/*.json next to the manifest or
 * in a plugin's folder); null when none is.
 */
export async function startObjectStore(manifest: Manifest, pluginFiles: readonly string[], log: Logger): Promise<ObjectStore | null> {
  const files = declarationFiles(manifest.dir, pluginFiles);
  const schema = loadSchema(files);
  publishConfig(null);
  if (schema.types.length === 0) return null;
  const config = { ...storeConfig(manifest.components, manifest.dir, schema, randomUUID()), announceCommits: manifest.listed.has('Cluster') };
  // Refused before the database file is made (src/cluster/feature.ts checks it too).
  if (manifest.listed.has('Cluster') && config.backend !== 'postgresql') throw clusterNeedsPostgres(manifest.file);
  try {
    if (config.backend === 'sqlite') syncSqliteSchema(config);
    else await syncPostgresSchema(config);
  } catch (err) {
    if ((err as { code?: string }).code === 'GSF_ERR_OBJECT_SCHEMA') throw err;
    const where = config.backend === 'sqlite' ? config.sqlitePath : 'ObjectStore.database_url';
    throw gsfError('GSF_ERR_OBJECT_STORE', `cannot open the ${config.backend} database (${where}): ${(err as Error).message}`);
  }
  // A new server may use another database: nothing cached before belongs to it.
  native.objCacheClear();
  native.objCacheConfigure(config.cacheBytes);
  const db = databaseLabel(config);
  defineStoredCounters(db);
  registerObjectCounters(counterRegistry, db, schema);
  publishConfig(config);

  const init: WriterInit = {
    entry: WRITER_FILE,
    config,
    components: manifest.components,
    logFile: logFileOf(manifest),
    logFormat: (manifest.components.Logging?.log_format as 'text' | 'json' | undefined) ?? 'text',
  };
  const worker = new Worker(WRITER_BOOT, { workerData: init, execArgv: workerExecArgv(), name: 'gsf-object-writer' });
  worker.on('message', (m: WriterEvent) => {
    if ('committed' in m) commitListener?.(m.committed);
  });
  const first = await nextEvent(worker);
  if (!('ready' in first)) {
    await worker.terminate();
    publishConfig(null);
    const why = 'failed' in first ? first.failed : 'unexpected message';
    throw gsfError('GSF_ERR_OBJECT_STORE', `the writer could not open the ${config.backend} database: ${why}`);
  }
  log.info(`object store: ${schema.types.length} type(s) on ${config.backend === 'sqlite' ? config.sqlitePath : 'postgresql'}`,
    { types: schema.types.map((t) => t.name) });
  // The types object_read_cached knows, published for every thread now: a native plugin's first
  // call may come before any JavaScript of the process has touched objects.
  threadStore();

  let stopped: Promise<void> | null = null;
  const stop = async (limitMs: number): Promise<void> => {
    await closeThreadStore();
    const done = nextEvent(worker).then(() => true, () => true);
    worker.postMessage({ stop: true });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      if (Number.isFinite(limitMs)) timer = setTimeout(() => resolve(false), limitMs);
    });
    const finished = await Promise.race([done, late]);
    clearTimeout(timer);
    if (!finished) {
      // Its connection closes with it: a transaction not yet committed is rolled back by the database.
      log.warn(`the object writer had not written every commit ${limitMs} ms into the stop (one waiting on a lock held `
        + 'elsewhere?): it is ended without them; whether they were stored is what the database says');
    }
    await worker.terminate();
    publishConfig(null);
    native.objCacheClear();
  };
  return {
    config,
    stop: (limitMs = Infinity) => (stopped ??= stop(limitMs)),
    threadEnded: (threadId) => {
      if (stopped === null) worker.postMessage({ threadEnded: threadId } satisfies WriterCommand);
    },
  };
}
