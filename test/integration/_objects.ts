/**
 * Helpers for object-model tests: one suite runs on both backends. SQLite needs nothing;
 * PostgreSQL gets one throwaway cluster per test file and a fresh database per server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { fixtures, startTestServer, waitFor, type Components, type TestServer } from './_server.ts';
import test from 'ava';
import { postgresInstalled, startPostgres, type TestPostgres } from './_postgres.ts';

export type Backend = 'sqlite' | 'postgresql';

/**
 * The backends the suites run on: both, where PostgreSQL is installed (CI installs it, so CI
 * always runs both); on a machine without it, the PostgreSQL half is reported as skipped.
 */
export const BACKENDS: Backend[] = postgresInstalled() ? ['sqlite', 'postgresql'] : ['sqlite'];
if (!postgresInstalled()) {
  test.skip('postgresql: skipped, PostgreSQL is not installed (apt-get install postgresql, as .ci/run does)', () => undefined);
}

export const OBJECTS_PROBE = path.join(fixtures, 'plugins', 'objects-probe');

let cluster: Promise<TestPostgres> | null = null;
let databases = 0;

/** The file's PostgreSQL cluster (started on first use). */
export function postgres(): Promise<TestPostgres> {
  return cluster ??= startPostgres();
}

/** Stops the file's cluster, if one was started (call from test.after.always). */
export async function stopPostgres(): Promise<void> {
  if (cluster) await (await cluster).stop();
  cluster = null;
}

/** ObjectStore arguments for a fresh store of `backend` (a new database for PostgreSQL). */
export async function storeArgs(backend: Backend, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  if (backend === 'sqlite') return { ...extra };
  const db = await (await postgres()).database(`gsf_test_${process.pid}_${++databases}`);
  return { database_url: db, ...extra };
}

/** Starts a server with the objects-probe plugin on `backend` (`store`: ObjectStore arguments). */
export async function startObjectServer(store: Record<string, unknown>, components: Components = {}, plugins = [OBJECTS_PROBE],
  dir?: string): Promise<TestServer> {
  const merged = { ...components, ObjectStore: store };
  if (dir === undefined) return startTestServer(merged, plugins);
  return startTestServer(merged, plugins, dir);
}

/** Waits until no event is queued or running. */
export function idle(ms = 20000): Promise<boolean> {
  return waitFor(() => {
    const q = native.queueStats();
    return q.waiting === 0 && q.outstanding === 0;
  }, ms, 'the event queue to drain');
}

/** JSON lines of a notes file. */
export function readNotes<T>(file: string): T[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as T) : [];
}

/** A stored counter's value (0 when absent). */
export function counter(category: string, name: string): number {
  return native.counterValue(category, name) ?? 0;
}

/** Runs `fn` with a server of the object declarations in folder `dir` (ObjectStore arguments `store`), the cache cleared, then stops it. */
export async function withObjectServerIn<T>(store: Record<string, unknown>, dir: string, fn: (s: TestServer) => Promise<T>): Promise<T> {
  const s = await startObjectServer(store, {}, [], dir);
  try {
    native.objCacheClear();
    return await fn(s);
  } finally {
    await s.stop();
  }
}

/** The outcome of a transaction: 'ok' or the error's message. */
export async function attempt(fn: Parameters<typeof transact>[0]): Promise<string> {
  try {
    await transact(fn);
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  }
}
