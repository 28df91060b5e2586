/**
 * Native plugins in the manifest: how they are named, and every way loading one fails — each
 * a start error naming the plugin, the path and the reason (the ABI checks themselves are in
 * native/tests, one broken library each).
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startServer } from '../../src/index.ts';
import { GsfError } from '../../src/errors.ts';
import { fixtures } from './_server.ts';

const root = path.join(fixtures, '..', '..');
const examples = path.join(root, 'plugins');

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-native-'));
}

/** A plugin folder whose gsf-plugin.json points at `library` (written as given). */
function pluginFolder(dir: string, name: string, library: string, contents?: string): string {
  const folder = path.join(dir, name);
  fs.mkdirSync(path.join(folder, 'build'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'gsf-plugin.json'), JSON.stringify({ native: library }));
  if (contents !== undefined) fs.writeFileSync(path.join(folder, library), contents);
  return folder;
}

/** Components of a quiet server: API on port 0, one event thread, logs to a file of `dir`. */
function components(dir: string): unknown[] {
  return [{ name: 'ApiService', arguments: { api_service_port: 0 } }, { name: 'EventDispatcher', arguments: { event_threads_size: 1 } },
    { name: 'Logging', arguments: { log_file: path.join(dir, 'server.log') } }];
}

async function startError(plugins: string[], dir = tempDir()): Promise<GsfError> {
  const manifest = { components: components(dir), plugins };
  try {
    const server = await startServer({ manifest, dir });
    await server.stop();
  } catch (err) {
    if (err instanceof GsfError) return err;
    throw err;
  }
  throw new Error('the server started');
}

test.serial('a library path or a folder with gsf-plugin.json loads; the plugin is listed with its version', async (t) => {
  const dir = tempDir();
  const manifest = {
    components: components(dir),
    plugins: [path.join(examples, 'native-echo', 'build', 'native-echo.so'), path.join(examples, 'native-greeter')],
  };
  const server = await startServer({ manifest, dir });
  try {
    t.deepEqual((server.status().plugins as unknown[]), [{ name: 'native-echo', version: '1.0.0' }, { name: 'native-greeter', version: '1.0.0' }]);
    t.true(server.thread.runtime.handlers.has('native_example.echoed'));
  } finally {
    await server.stop();
  }
});

test.serial('a missing library, a file that is no library, a bad gsf-plugin.json: start errors naming plugin and path', async (t) => {
  const dir = tempDir();
  const missing = pluginFolder(dir, 'unbuilt', 'build/unbuilt.so');
  let err = await startError([missing]);
  t.is(err.code, 'GSF_ERR_PLUGIN_LOAD');
  t.is(err.message, `plugin 'unbuilt' load failed: ${path.join(missing, 'build', 'unbuilt.so')}: no such file (build native plugins with \`npm run build:plugins\`)`);
  const text = pluginFolder(dir, 'text', 'build/text.so', 'not a library\n');
  err = await startError([text]);
  t.is(err.message, `plugin 'text' load failed: ${fs.realpathSync(path.join(text, 'build', 'text.so'))}: not a shared library (no ELF or Mach-O header)`);
  const bad = path.join(dir, 'bad-marker');
  fs.mkdirSync(bad);
  fs.writeFileSync(path.join(bad, 'gsf-plugin.json'), '{"native": 1}');
  err = await startError([bad]);
  t.is(err.message, `plugin 'bad-marker' load failed: ${path.join(bad, 'gsf-plugin.json')} must be {"native": "<path of the .so, relative to the folder>"}`);
});

test.serial('a newer ABI and a failing init stop the start with the plugin\'s reason', async (t) => {
  const newer = path.join(fixtures, 'native-plugins', 'abi-newer');
  let err = await startError([newer]);
  t.regex(err.message, /^plugin 'abi-newer' load failed: \/.*\/abi-newer\.so: built for plugin ABI 1\.3, newer than this gsf's 1\.2/);
  err = await startError([path.join(fixtures, 'native-plugins', 'init-fails')]);
  t.regex(err.message, /^plugin 'init-fails' load failed: \/.*\/init-fails\.so: init failed: UNAVAILABLE: the game database is unreachable$/);
});

test.serial('a message type registered by a native and a managed plugin: an error naming both, in either order', async (t) => {
  const echo = path.join(examples, 'native-echo');
  const managed = path.join(fixtures, 'plugins', 'dup-native');
  let err = await startError([echo, managed]);
  t.is(err.code, 'GSF_ERR_PLUGIN_DUPLICATE');
  t.is(err.message, "plugin 'dup-native' registers message type 'native.echo', already registered by plugin 'native-echo'");
  err = await startError([managed, echo]);
  t.is(err.message, "plugin 'native-echo' registers message type 'native.echo', already registered by plugin 'dup-native'");
  // A clean start afterwards: the failed attempts left nothing registered behind.
  const dir = tempDir();
  const server = await startServer({ manifest: { components: components(dir), plugins: [echo] }, dir });
  t.deepEqual(server.status().plugins, [{ name: 'native-echo', version: '1.0.0' }]);
  await server.stop();
});

test('gsf start exits 1 with one line naming the plugin, the path and the reason', async (t) => {
  const dir = tempDir();
  const folder = pluginFolder(dir, 'broken', 'build/broken.so', 'not a library\n');
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({ components: [{ name: 'ApiService', arguments: { api_service_port: 0 } }], plugins: [folder] }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 1);
  t.is(err, `gsf: plugin 'broken' load failed: ${fs.realpathSync(path.join(folder, 'build', 'broken.so'))}: not a shared library (no ELF or Mach-O header)\n`);
});

/** A copy of the native-echo example in a plugin folder of `dir`, passed through `edit` (bytes in, bytes out). */
function editedEcho(dir: string, name: string, edit: (bytes: Buffer) => Buffer): string {
  const folder = pluginFolder(dir, name, `build/${name}.so`);
  fs.writeFileSync(path.join(folder, 'build', `${name}.so`), edit(fs.readFileSync(path.join(examples, 'native-echo', 'build', 'native-echo.so'))));
  return folder;
}

test('a library cut short is refused before dlopen: gsf start exits 1 with one line, not SIGBUS', async (t) => {
  const dir = tempDir();
  // Its ELF header is whole, its segments reach past the end of the file: dlopen would map them.
  const folder = editedEcho(dir, 'cut', (b) => b.subarray(0, 4096));
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({ components: [{ name: 'ApiService', arguments: { api_service_port: 0 } }], plugins: [folder] }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  t.deepEqual([code, signal], [1, null], err);
  const file = fs.realpathSync(path.join(folder, 'build', 'cut.so'));
  t.regex(err, new RegExp(`^gsf: plugin 'cut' load failed: ${file.replace(/[.]/g, '\\.')}: truncated: segment \\d+ \\(bytes \\d+ to \\d+\\) `
    + 'ends past the end of the file \\(the file has 4096 bytes: cut short, or still being written\\?\\)\\n$'));
});

test.serial('a library of another architecture is refused naming it, not "No such file or directory"', async (t) => {
  const dir = tempDir();
  const host = fs.readFileSync(path.join(examples, 'native-echo', 'build', 'native-echo.so')).readUInt16LE(18);
  const other = host === 183 ? 62 : 183; // AArch64, or x86-64 on an AArch64 host
  const folder = editedEcho(dir, 'foreign', (b) => {
    const copy = Buffer.from(b);
    copy.writeUInt16LE(other, 18); // e_machine
    return copy;
  });
  const err = await startError([folder]);
  t.is(err.code, 'GSF_ERR_PLUGIN_LOAD');
  const names: Record<number, string> = { 62: 'x86-64', 183: 'AArch64 (arm64)' };
  t.is(err.message, `plugin 'foreign' load failed: ${fs.realpathSync(path.join(folder, 'build', 'foreign.so'))}: built for ${names[other]} `
    + `(ELF e_machine ${other}), but this machine is ${names[host]} (e_machine ${host}): build the plugin for this machine`);
});
