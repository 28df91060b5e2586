/**
 * gsf embedded by a program that runs as ES modules (`node --import tsx`), where the `gsf`
 * command and the test runs load it as CommonJS (src/load-module.ts): the server loads as ES
 * modules, a plugin that imports `gsf` gets that same instance on the main thread (its
 * `GsfError` is the program's), and a session's request is answered on an event thread.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writePlugin } from './_server.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const src = (file: string): string => JSON.stringify(path.join(root, 'src', file));

test('a program run with --import tsx starts gsf as ES modules; its plugins share its gsf; sessions are answered', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-esm-'));
  const plugin = writePlugin(dir, 'esm-probe', `
    if (isMainThread) (globalThis as { pluginGsfError?: unknown }).pluginGsfError = GsfError;
    api.sessions.onMessage('esm.check', (body, msg) => msg.reply({ body, commonjs: typeof require === 'function' }));`);
  const index = path.join(plugin, 'index.ts');
  fs.writeFileSync(index, fs.readFileSync(index, 'utf8').replace("import { definePlugin } from 'gsf';",
    "import { definePlugin, GsfError } from 'gsf';\nimport { isMainThread } from 'node:worker_threads';"));
  const script = path.join(dir, 'embed.mts');
  fs.writeFileSync(script, `
import { startServer, GsfError } from ${src('index.ts')};
import { GsfClient } from ${src('sdk/index.ts')};
import { activeSessions } from ${src('session/main/feature.ts')};
const manifest = { components: [
  { name: 'EventDispatcher', arguments: { event_threads_size: 1 } },
  { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0 } },
  { name: 'Logging', arguments: { log_file: ${JSON.stringify(path.join(dir, 'server.log'))} } },
], plugins: [${JSON.stringify(plugin)}] };
const server = await startServer({ manifest, dir: ${JSON.stringify(dir)} });
const c = await GsfClient.connect({ url: \`ws://127.0.0.1:\${activeSessions!.listener.port}\`, version: '1.0.0' });
const reply = await c.request('esm.check', 7);
await c.close();
await server.stop();
const pluginGsfError = (globalThis as { pluginGsfError?: unknown }).pluginGsfError;
console.log(JSON.stringify({ commonjs: typeof require === 'function', sameGsf: pluginGsfError === GsfError, reply }));
`);
  const child = spawn(process.execPath, ['--import=tsx', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const code = await new Promise<number | null>((r) => child.on('close', r));
  t.is(code, 0, err);
  // Event threads load plugins through tsx's require hook, whatever the main thread runs as.
  t.deepEqual(JSON.parse(out.trim().split('\n').pop() ?? 'null'), { commonjs: false, sameGsf: true, reply: { body: 7, commonjs: true } });
});
