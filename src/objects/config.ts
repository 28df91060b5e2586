/**
 * The object store's settings: read from the manifest by the main thread, published through
 * the native core (process-wide), read by event threads and the writer.
 */
import path from 'node:path';
import { native } from '../native.ts';
import { ManifestError, type ComponentArgs } from '../config/manifest.ts';
import type { ObjectSchema } from './schema.ts';

export type BackendKind = 'sqlite' | 'postgresql';

export interface StoreConfig {
  backend: BackendKind;
  /** Absolute path of the SQLite file. */
  sqlitePath: string;
  sqliteSynchronous: 'full' | 'normal';
  /** `sqlite_busy_timeout_in_ms`: how long a statement waits for another process's lock. */
  sqliteBusyMs: number;
  databaseUrl: string;
  cacheBytes: number;
  maxReruns: number;
  groupMaxEvents: number;
  readConnections: number;
  /** `database_query_timeout_in_ms`: a PostgreSQL query waits this long for its answer (0: forever). */
  queryTimeoutMs: number;
  /** `decoded_copies_per_thread`: decoded read copies each thread keeps (DecodedCopies). */
  decodedCopies: number;
  /** `CounterService.warning_threshold_slow_query_in_sec`. */
  slowQuerySec: number;
  schema: ObjectSchema;
  /** Names this server's writer (channel names); unique per start within a process. */
  instance: string;
  /** The writer tells the main thread what each group committed (Cluster: other servers drop their copies). */
  announceCommits: boolean;
}

/** Settings from the manifest's components (`dir`: the manifest's folder). */
export function storeConfig(components: Record<string, ComponentArgs>, dir: string, schema: ObjectSchema, instance: string): StoreConfig {
  const os = components.ObjectStore!;
  const url = os.database_url as string;
  return {
    backend: url === '' ? 'sqlite' : 'postgresql',
    sqlitePath: path.resolve(dir, os.sqlite_path as string),
    sqliteSynchronous: os.sqlite_synchronous as 'full' | 'normal',
    sqliteBusyMs: os.sqlite_busy_timeout_in_ms as number,
    databaseUrl: url,
    cacheBytes: os.cache_size_in_bytes as number,
    maxReruns: os.max_event_reruns as number,
    groupMaxEvents: os.commit_group_max_events as number,
    readConnections: os.read_connections_per_thread as number,
    queryTimeoutMs: os.database_query_timeout_in_ms as number,
    decodedCopies: os.decoded_copies_per_thread as number,
    slowQuerySec: (components.CounterService?.warning_threshold_slow_query_in_sec as number | undefined) ?? 1,
    schema,
    instance,
    announceCommits: false,
  };
}

/** Publishes the settings for every thread (null: no store in this process). */
/** The start error of a cluster whose game declares object types on SQLite. */
export function clusterNeedsPostgres(manifestFile: string): ManifestError {
  return new ManifestError(`${manifestFile}: Cluster needs ObjectStore.database_url (PostgreSQL) when object types are declared: `
    + "every server must see the same objects, and each server's SQLite file would be a game of its own");
}

export function publishConfig(config: StoreConfig | null): void {
  native.objConfigSet(JSON.stringify(config));
}

let cached: { version: number; config: StoreConfig | null } | null = null;

/** The published settings, or null when the server has no object store. */
export function publishedConfig(): StoreConfig | null {
  const version = native.objConfigVersion();
  if (cached?.version !== version) {
    const parsed = JSON.parse(native.objConfigGet()) as Partial<StoreConfig> | null;
    // Before any server published settings the blob holds `{}`.
    cached = { version, config: parsed?.schema ? parsed as StoreConfig : null };
  }
  return cached.config;
}

/** The version of the settings `publishedConfig` last read. */
export function publishedConfigVersion(): number {
  return cached?.version ?? -1;
}

/** The database's name in counters and log lines. */
export function databaseLabel(config: StoreConfig): string {
  return config.backend;
}
