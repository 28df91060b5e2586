/**
 * Reload triggers of `gsf start` as a process: SIGHUP reloads every plugin whose source changed,
 * and `--watch` reloads on file changes; a session stays connected through both, and a broken
 * edit leaves the server answering with the last good version.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GsfClient } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { newPluginDir, writePlugin, type Pong } from './_reload.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `gsf start` on a manifest with the plugin in `dir`; resolves once it listens. */
async function startProcess(dir: string, extra: string[] = []) {
  const manifest = path.join(path.dirname(dir), 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'ApiService', arguments: { api_service_port: 0 } },
      { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0 } },
    ],
    plugins: [dir],
  }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest, ...extra],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const line = await waitFor(() => out.split('\n').find((l) => l.includes('listening api=')), 60000, 'the listening line');
  const ws = /websocket=127\.0\.0\.1:(\d+)/.exec(line)![1];
  const client = await GsfClient.connect({ url: `ws://127.0.0.1:${ws}`, version: '1.0.0', codec: 'json' });
  return { child, exited, client, out: () => out };
}

test('SIGHUP reloads every plugin whose source changed; a session connected before gets the new reply', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const p = await startProcess(dir);
  try {
    t.like(await p.client.request('ping', { n: 1 }) as Pong, { version: '1.0.0', seq: 1 });
    p.child.kill('SIGHUP');
    await waitFor(() => p.out().includes("SIGHUP: no plugin's source changed"), 30000, 'the SIGHUP with nothing changed');
    writePlugin(dir, { version: '2.0.0' });
    p.child.kill('SIGHUP');
    await waitFor(() => p.out().includes("plugin reload: 'reloadable' 1.0.0 -> 2.0.0"), 30000, 'the reload line');
    t.like(await p.client.request('ping', { n: 2 }) as Pong, { version: '2.0.0', seq: 2 });
    t.regex(p.out(), /SIGHUP: reloading every plugin whose source changed/);
  } finally {
    await p.client.close();
    p.child.kill('SIGTERM');
  }
  t.is(await p.exited, 0);
});

test('--watch reloads on file change, and a broken edit keeps the last good version serving', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const p = await startProcess(dir, ['--watch']);
  const version = async (n: number): Promise<string> => ((await p.client.request('ping', { n })) as Pong).version;
  try {
    await waitFor(() => p.out().includes('--watch: reloading plugins when their files change (1 folder(s))'), 30000, 'the watch line');
    let n = 0;
    t.is(await version(++n), '1.0.0');
    writePlugin(dir, { version: '2.0.0' });
    await waitFor(async () => (await version(++n)) === '2.0.0', 30000, 'version 2 to answer');
    // A syntax error: logged, refused, and version 2 keeps answering.
    fs.writeFileSync(path.join(dir, 'index.ts'), 'export default {{{\n');
    await waitFor(() => p.out().includes('GSF_ERR_RELOAD_FAILED'), 30000, 'the refusal in the log');
    t.is(await version(++n), '2.0.0');
    writePlugin(dir, { version: '3.0.0' });
    await waitFor(async () => (await version(++n)) === '3.0.0', 30000, 'version 3 to answer');
    t.regex(p.out(), /file change: reloading every plugin whose source changed/);
  } finally {
    await p.client.close();
    p.child.kill('SIGTERM');
  }
  t.is(await p.exited, 0);
});
