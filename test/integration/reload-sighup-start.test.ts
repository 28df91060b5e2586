/**
 * SIGHUP and `gsf start` as a process (docs/guides/hot-reload.md: `kill -HUP …` is "the same as"
 * `POST /v1/plugins/reload`): during the start it is kept and acted on once the server is up,
 * never the signal's default action, which would end the process.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './_server.ts';
import { newPluginDir } from './_reload.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * A SIGHUP that reaches `gsf start` while it is still starting (its plugins registering; a
 * script sending it right after a restart) does not end the process: the server comes up, then
 * runs the reload asked for (of unchanged files here, so it reloads nothing).
 */
test('a SIGHUP while gsf start is still starting is kept: the server comes up, then reloads', async (t) => {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-hup-start-')), 'hold');
  fs.writeFileSync(marker, '');
  const dir = newPluginDir({
    version: '1.0.0',
    module: `import fs from 'node:fs';
import os from 'node:os';\nimport { isMainThread } from 'node:worker_threads';`,
    register: `    if (isMainThread && fs.existsSync(${JSON.stringify(marker)})) {
      api.log.info('register: holding the start');
      return (async () => { while (fs.existsSync(${JSON.stringify(marker)})) await new Promise((r) => setTimeout(r, 5)); })();
    }`,
  });
  const manifest = path.join(path.dirname(dir), 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({ components: [
    { name: 'ApiService', arguments: { api_service_port: 0 } },
    { name: 'EventDispatcher', arguments: { event_threads_size: 1 } },
  ], plugins: [dir] }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  try {
    await waitFor(() => out.includes('register: holding the start'), 60000, 'the start to reach register');
    child.kill('SIGHUP');
    fs.rmSync(marker);
    const first = await waitFor(() => (child.exitCode !== null || child.signalCode !== null ? 'exited'
      : out.includes('listening api=') ? 'listening' : null), 60000, 'the start to finish');
    t.is(first, 'listening', `exit ${String(child.exitCode)} signal ${String(child.signalCode)}\n${out}`);
    await waitFor(() => out.includes('SIGHUP during the start: reloading the plugins now'), 60000, 'the reload line');
    child.kill('SIGTERM');
    t.deepEqual(await exited, { code: 0, signal: null }, out);
  } finally {
    fs.rmSync(marker, { force: true });
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
