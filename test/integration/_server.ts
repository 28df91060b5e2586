/** Helpers for tests that run a real server in this process. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type GsfServer } from '../../src/index.ts';
import type { NoteRecord } from '../fixtures/plugins/probe/index.ts';

export const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

export interface TestServer {
  server: GsfServer;
  dir: string;
  logFile: string;
  notes: string;
  /** Log lines so far. */
  logs(): string[];
  /** Records written by probe.note so far. */
  records(): NoteRecord[];
  stop(): Promise<void>;
}

export type Components = Record<string, Record<string, unknown>>;

/**
 * I/O threads of the session services tests start (`SessionService.io_threads_size`), unless a
 * test sets it: `GSF_TEST_IO_THREADS`, 1 by default. `npm test` runs the session tests with 1 and with 2.
 */
export const TEST_IO_THREADS = Number(process.env.GSF_TEST_IO_THREADS ?? 1);

/** Writes a TypeScript plugin `name` into `dir`/`name`, whose register() body is `body`; returns its folder. */
export function writePlugin(dir: string, name: string, body: string): string {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'index.ts'),
    `import { definePlugin } from 'gsf';\nexport default definePlugin({ name: '${name}', version: '1.0.0', register(api) {\n${body}\n} });\n`);
  return folder;
}

/** Starts a server with the probe plugin, logging to a temp file, API on port 0, one event thread. */
export async function startTestServer(components: Components = {}, plugins = ['probe'], reuseDir?: string): Promise<TestServer> {
  const dir = reuseDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-test-'));
  const logFile = path.join(dir, 'server.log');
  const notes = path.join(dir, 'notes.jsonl');
  const merged: Components = {
    ApiService: { api_service_port: 0 },
    Logging: { log_file: logFile },
    ...components,
  };
  merged.ApiService = { api_service_port: 0, ...components.ApiService };
  // One event thread unless the test asks for more: every worker thread loads gsf's modules
  // again, which is most of what a server's start costs.
  merged.EventDispatcher = { event_threads_size: 1, ...components.EventDispatcher };
  // The REST groups most tests read; a service runs only when its component is listed.
  merged.CounterService = { ...components.CounterService };
  merged.RuntimeConfiguration = { ...components.RuntimeConfiguration };
  merged.Logging = { log_file: logFile, ...components.Logging };
  if (components.SessionService !== undefined) merged.SessionService = { io_threads_size: TEST_IO_THREADS, ...components.SessionService };
  const manifest = {
    components: Object.entries(merged).map(([name, args]) => ({ name, arguments: args })),
    plugins: plugins.map((p) => (p.includes('/') ? p : path.join(fixtures, 'plugins', p))),
  };
  const server = await startServer({ manifest, dir });
  const read = (f: string): string[] => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);
  return {
    server, dir, logFile, notes,
    logs: () => read(logFile),
    records: () => read(notes).map((l) => JSON.parse(l) as NoteRecord),
    stop: () => server.stop(),
  };
}

/** Polls `fn` until it returns a truthy value or `ms` pass. */
export async function waitFor<T>(fn: () => T | Promise<T>, ms = 10000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
