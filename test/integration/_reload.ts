/**
 * Helpers for hot-reload tests: a managed plugin kept in a temporary folder, written again with
 * other code between reloads, and REST calls to the plugin routes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiUrl } from './_session.ts';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { fixtures, type TestServer } from './_server.ts';

export const PLUGIN = 'reloadable';

export interface PluginCode {
  version: string;
  /** More statements inside `register(api)`. */
  register?: string;
  /** Statements at module level (before the definition). */
  module?: string;
  /** The whole index.ts instead (broken edits). */
  raw?: string;
}

/**
 * The plugin's index.ts. `ping` replies with the client's `n`, the plugin version that answered,
 * and `seq`: how many pings of this session have run (a counter, which survives reloads), so a
 * client sees at once a ping that ran twice or out of order.
 */
export function pluginCode(code: PluginCode): string {
  if (code.raw !== undefined) return code.raw;
  return `import { definePlugin } from 'gsf';
import { label } from './label.ts';
${code.module ?? ''}
export default definePlugin({
  name: '${PLUGIN}',
  version: '${code.version}',
  register(api) {
    api.counters.define('${PLUGIN}', 'defined', 'Created once, kept across reloads', 7);
    api.sessions.onMessage<{ n: number }>('ping', (body, msg) => {
      const seq = api.counters.increase('${PLUGIN}', 'seq_' + msg.sessionId);
      msg.reply({ n: body.n, seq, version: '${code.version}', label: label() });
    });
${code.register ?? ''}
  },
});
`;
}

/** Writes the plugin into `dir` (a second module, label.ts, is imported by path). */
export function writePlugin(dir: string, code: PluginCode, labelText = 'label-1'): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'label.ts'), `export function label(): string {\n  return '${labelText}';\n}\n`);
  fs.writeFileSync(path.join(dir, 'index.ts'), pluginCode(code));
}

/** A fresh plugin folder with version `version`. */
export function newPluginDir(code: PluginCode): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-reload-')), PLUGIN);
  writePlugin(dir, code);
  return dir;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** POST to the API service; the JSON answer. */
export async function post(s: TestServer, route: string): Promise<Answer> {
  const res = await fetch(`${apiUrl(s)}${route}`, { method: 'POST' });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

/** GET from the API service; the JSON answer. */
export async function get(s: TestServer, route: string): Promise<Answer> {
  const res = await fetch(`${apiUrl(s)}${route}`);
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

/** The reply of `ping` as the fixture sends it. */
export interface Pong {
  n: number;
  seq: number;
  version: string;
  label: string;
}

/** The native plugin the reload tests rebuild (test/fixtures/native-reload). */
export const NATIVE_RELOADABLE = 'native-reloadable';

/** Configures and builds the native-reload fixture in `dir` with these CMake cache values. */
export function buildNativeReloadable(dir: string, generation: number, name = NATIVE_RELOADABLE): void {
  const root = path.join(fixtures, '..', '..');
  execFileSync('cmake', ['-S', dir, '-B', path.join(dir, 'out'), `-DGSF_ROOT=${root}`, `-DRELOAD_GENERATION=${generation}`,
    `-DRELOAD_NAME=${name}`], { stdio: 'pipe' });
  execFileSync('cmake', ['--build', path.join(dir, 'out')], { stdio: 'pipe' });
}

/**
 * buildNativeReloadable without blocking this process: for a server running in it, as one runs
 * beside a build (a watcher must see the build's files come while it serves).
 */
export async function buildNativeReloadableAsync(dir: string, generation: number, name = NATIVE_RELOADABLE): Promise<void> {
  const run = promisify(execFile);
  const root = path.join(fixtures, '..', '..');
  await run('cmake', ['-S', dir, '-B', path.join(dir, 'out'), `-DGSF_ROOT=${root}`, `-DRELOAD_GENERATION=${generation}`, `-DRELOAD_NAME=${name}`]);
  await run('cmake', ['--build', path.join(dir, 'out')]);
}

/** A copy of the native-reload fixture in a fresh temporary folder, built as generation 1. */
export function nativeReloadableCopy(): { dir: string; library: string } {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-native-reload-test-')), NATIVE_RELOADABLE);
  fs.cpSync(path.join(fixtures, 'native-reload'), dir, { recursive: true });
  buildNativeReloadable(dir, 1);
  return { dir, library: path.join(dir, 'build', `${NATIVE_RELOADABLE}.so`) };
}
