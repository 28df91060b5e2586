/** Helpers for authenticator tests: the agent as a real `gsf authenticator` process. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const gsfBin = path.join(root, 'bin', 'gsf.mjs');

export interface AgentProcess {
  child: ChildProcess;
  port: number;
  url: string;
  manifest: string;
  /** Standard output so far (the agent logs there). */
  out(): string;
  err(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Writes an authenticator manifest to a temp dir and returns its path. */
export function writeAgentManifest(json: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-auth-'));
  const file = path.join(dir, 'authenticator.MANIFEST.json');
  fs.writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json));
  return file;
}

/** Runs `gsf authenticator --manifest FILE` and collects its output. */
export function runAgent(manifest: string) {
  const child = spawn(process.execPath, [gsfBin, 'authenticator', '--manifest', manifest], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, out: () => out, err: () => err };
}

/** Starts an agent on port 0 with `args` for the Authenticator component (enabled: 1 added). */
export async function startAgentProcess(args: Record<string, unknown>, logging: Record<string, unknown> = { v: 1 }): Promise<AgentProcess> {
  const manifest = writeAgentManifest({
    components: [
      { name: 'Authenticator', arguments: { enabled: 1, address: '127.0.0.1', port: 0, ...args } },
      { name: 'Logging', arguments: logging },
    ],
  });
  const p = runAgent(manifest);
  const deadline = Date.now() + 30000;
  let m: RegExpExecArray | null = null;
  while (!(m = /listening authenticator=127\.0\.0\.1:(\d+)/.exec(p.out()))) {
    if (Date.now() > deadline || p.child.exitCode !== null) throw new Error(`agent did not start: ${p.out()}${p.err()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const port = Number(m[1]);
  return {
    child: p.child, port, url: `http://127.0.0.1:${port}`, manifest, out: p.out, err: p.err,
    stop: () => {
      p.child.kill('SIGTERM');
      return p.exited;
    },
  };
}

export interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
}

/** POSTs `body` (an object is sent as JSON, a string as is) and parses the JSON answer. */
export async function post(url: string, body: unknown, method = 'POST'): Promise<Answer> {
  const res = await fetch(url, {
    method,
    body: method === 'GET' ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.json() as unknown };
}
