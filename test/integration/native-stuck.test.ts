import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function until<T>(fn: () => T | undefined | Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a native handler that never returns times out, its thread is abandoned and counted, the server serves on and stops on SIGTERM', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-native-stuck-'));
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'ApiService', arguments: { api_service_port: 0 } },
      { name: 'CounterService', arguments: {} },
      { name: 'EventDispatcher', arguments: { event_threads_size: 1, event_timeout_in_ms: 500 } },
    ],
    plugins: [path.join(root, 'test', 'fixtures', 'native-plugins', 'native-stuck')],
  }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  try {
    const port = Number(/listening api=127\.0\.0\.1:(\d+)/.exec(await until(() => out.match(/listening api=\S+/)?.[0], 30000, 'start'))![1]);
    const counter = async (category: string, name: string): Promise<number> => {
      const r = await fetch(`http://127.0.0.1:${port}/v1/counters/${category}/${name}/`);
      return r.status === 200 ? ((await r.json()) as { value: number }).value : -1;
    };
    await until(() => out.includes('Event timeout: event_name=stuck.spin'), 10000, 'the timeout line');
    // A new event thread serves the counting timer after the timeout.
    const before = await counter('native_stuck', 'counted');
    await until(async () => (await counter('native_stuck', 'counted')) > before + 5, 10000, 'counting to go on');
    t.is(await counter('engine', 'event_threads_ended'), 1);
    await until(async () => (await counter('engine', 'event_threads_abandoned')) === 1, 15000, 'the thread to be abandoned');
    t.regex(out, /event thread \d+ did not end 5000 ms after its event timed out \(stuck in native code\?\): abandoned/);
    child.kill('SIGTERM');
    t.is(await exited, 0);
    t.true(out.includes('stopped'));
  } finally {
    child.kill('SIGKILL');
  }
});
