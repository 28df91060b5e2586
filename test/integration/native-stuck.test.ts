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

interface Stuck { out: () => string; exited: Promise<number | null>; kill: (signal: NodeJS.Signals) => void; port: number }

const children = new Set<ReturnType<typeof spawn>>();
// A test that fails half-way must not leave a server spinning in native code behind it: the
// server is killed when this process exits, and also when it is killed (setpriv --pdeathsig,
// from util-linux, where it is installed).
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((f) => fs.existsSync(f));

async function startStuck(): Promise<Stuck> {
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
  const command = [process.execPath, path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest];
  if (setpriv) command.unshift(setpriv, '--pdeathsig', 'KILL');
  const child = spawn(command[0]!, command.slice(1), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => { children.delete(child); resolve(code); }));
  const port = Number(/listening api=127\.0\.0\.1:(\d+)/.exec(await until(() => out.match(/listening api=\S+/)?.[0], 30000, 'start'))![1]);
  return { out: () => out, exited, kill: (signal) => child.kill(signal), port };
}

async function counter(port: number, category: string, name: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}/v1/counters/${category}/${name}/`);
  return r.status === 200 ? ((await r.json()) as { value: number }).value : -1;
}

test.serial('a native handler that never returns times out, its thread is abandoned and counted, the server serves on and stops on SIGTERM', async (t) => {
  const s = await startStuck();
  try {
    await until(() => s.out().includes('Event timeout: event_name=stuck.spin'), 10000, 'the timeout line');
    // A new event thread serves the counting timer after the timeout.
    const before = await counter(s.port, 'native_stuck', 'counted');
    await until(async () => (await counter(s.port, 'native_stuck', 'counted')) > before + 5, 10000, 'counting to go on');
    t.is(await counter(s.port, 'engine', 'event_threads_ended'), 1);
    await until(async () => (await counter(s.port, 'engine', 'event_threads_abandoned')) === 1, 15000, 'the thread to be abandoned');
    t.regex(s.out(), /event thread \d+ did not end 5000 ms after its event timed out \(stuck in native code\?\): abandoned/);
    s.kill('SIGTERM');
    t.is(await s.exited, 0);
    t.true(s.out().includes('stopped'));
  } finally {
    s.kill('SIGKILL');
  }
});

test.serial('a second SIGTERM while a thread is still stuck in native code exits at once with status 1', async (t) => {
  const s = await startStuck();
  try {
    await until(() => s.out().includes('Event timeout: event_name=stuck.spin'), 10000, 'the timeout line');
    // Before the thread is given up on: the stop is waiting for it.
    t.is(await counter(s.port, 'engine', 'event_threads_abandoned'), 0);
    s.kill('SIGTERM');
    await until(() => s.out().includes('SIGTERM received: stopping'), 10000, 'the stop to begin');
    s.kill('SIGTERM');
    t.is(await s.exited, 1);
    t.true(s.out().includes('gsf: SIGTERM again, exiting without draining'));
  } finally {
    s.kill('SIGKILL');
  }
});
