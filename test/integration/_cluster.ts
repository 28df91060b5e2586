/**
 * Helpers for cluster tests: a throwaway Redis on a free loopback port (Debian's
 * `redis-server`, installed by .ci/run), and `gsf start` processes that log to a file and
 * report their ports.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GsfClient, type CodecName } from '../../src/sdk/index.ts';
import { fixtures, TEST_IO_THREADS, waitFor } from './_server.ts';
import { holdPort, type HeldPort } from './_ports.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Processes still running when the test process exits (a crash, a timeout) are killed then. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});
function track(c: ChildProcess): void {
  running.add(c);
  c.once('exit', () => running.delete(c));
}

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Stops Redis (SIGKILL: no goodbye to clients) and resolves once it exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (no persistence). */
  start(): Promise<void>;
  /** Freezes Redis (SIGSTOP) for `ms`: connections stay open, answers wait. */
  pause(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `redis-server` with no persistence on a free loopback port. */
export async function startRedis(): Promise<TestRedis> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error('redis-server is not installed (Debian: apt-get install redis-server; .ci/run does it)');
  }
  // The port is held while Redis is down, so that no server of a test file running alongside takes it.
  let held: HeldPort | null = await holdPort();
  let port = held.port;
  let child: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    held?.release();
    held = null;
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    track(proc);
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    proc.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
    await waitFor(() => out.includes('Ready to accept connections') || (proc.exitCode !== null ? Promise.reject(new Error(`redis-server exited: ${out}`)) : false),
      10000, 'redis-server');
  };
  const kill = async (): Promise<void> => {
    const proc = child;
    child = null;
    if (proc === null || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
    held = await holdPort(port).catch(() => null);
  };
  const stop = async (): Promise<void> => {
    await kill();
    held?.release();
    held = null;
  };
  const pause = async (ms: number): Promise<void> => {
    const proc = child!;
    proc.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, ms));
    proc.kill('SIGCONT');
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      // Taken between its release and Redis binding it: another port.
      if (attempt === 3 || !String(err).includes('Address already in use')) throw err;
      held = await holdPort();
      port = held.port;
    }
  }
  return { port, url: `redis://127.0.0.1:${port}`, kill, start: launch, stop, pause };
}

/** Runs `redis-cli` against a test Redis; returns its output. */
export function redisCli(redis: TestRedis, ...args: string[]): string {
  const r = spawnSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' });
  return r.stdout.trim();
}

export interface GsfProcess {
  readonly child: ChildProcess;
  readonly apiPort: number;
  readonly wsPort: number;
  readonly dir: string;
  readonly logFile: string;
  /** The server's id in the cluster (from its start line). */
  readonly serverId: string;
  readonly exited: Promise<number | null>;
  logs(): string[];
  api(p: string, init?: RequestInit): Promise<Response>;
  json<T = unknown>(p: string, init?: RequestInit): Promise<{ status: number; body: T }>;
  connect(codec?: CodecName): Promise<GsfClient>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: no stop hooks, no goodbye to Redis. */
  kill(): Promise<void>;
}

export type ComponentList = Record<string, Record<string, unknown>>;

/** Starts `gsf start` with the given components (API and WebSocket on free ports, logs to a file). */
export async function startGsf(components: ComponentList, plugins: string[], dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cluster-'))): Promise<GsfProcess> {
  const logFile = path.join(dir, 'server.log');
  const merged: ComponentList = {
    ApiService: { api_service_port: 0 },
    SessionService: { websocket_address: '127.0.0.1', websocket_port: 0, io_threads_size: TEST_IO_THREADS },
    CounterService: {},
    RuntimeConfiguration: {},
    EventDispatcher: { event_threads_size: 1 },
    ...components,
    Logging: { log_file: logFile, ...components.Logging },
  };
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: Object.entries(merged).map(([name, args]) => ({ name, arguments: args })),
    plugins: plugins.map((p) => (p.includes('/') ? p : path.join(fixtures, 'plugins', p))),
  }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const logs = (): string[] => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean) : []);
  const line = await waitFor(() => logs().find((l) => l.includes('listening api=')) ??
    (child.exitCode !== null ? `exited ${child.exitCode}: ${out} ${logs().join('\n')}` : undefined), 60000, 'gsf start');
  const api = /api=[\d.]+:(\d+)/.exec(line);
  const ws = /websocket=[\d.]+:(\d+)/.exec(line);
  if (!api) throw new Error(`gsf did not start: ${line}`);
  const joined = logs().map((l) => /Cluster: server (\S+) joined/.exec(l)?.[1]).find((id) => id !== undefined) ?? '';
  const apiPort = Number(api[1]);
  const wsPort = ws ? Number(ws[1]) : 0;
  const base = `http://127.0.0.1:${apiPort}`;
  return {
    child, apiPort, wsPort, dir, logFile, serverId: joined, exited, logs,
    api: (p, init) => fetch(base + p, init),
    async json<T>(p: string, init?: RequestInit) {
      const r = await fetch(base + p, init);
      const text = await r.text();
      return { status: r.status, body: (text === '' ? null : JSON.parse(text)) as T };
    },
    connect: (codec: CodecName = 'json') => GsfClient.connect({ url: `ws://127.0.0.1:${wsPort}`, version: '1.0.0', codec }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Collects the bodies of one pushed message type a client receives, in order. */
export function collect<T = unknown>(client: GsfClient, type: string): T[] {
  const seen: T[] = [];
  client.on(type, (body) => seen.push(body as T));
  return seen;
}
