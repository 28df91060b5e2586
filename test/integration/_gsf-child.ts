/**
 * `gsf start` in a child process, for tests of what the process itself writes (stdout, stderr,
 * its log file) and of its signals: one event thread, the API service on a picked port.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './_server.ts';
import { holdPort } from './_ports.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export type GsfChild = Awaited<ReturnType<typeof spawnChild>>;

/**
 * Starts `gsf start` with `logging` as its Logging arguments and `plugins`, and waits until it
 * serves (by its API: at a high minloglevel no `listening` line is written). The port is picked
 * free and let go before the child binds it: another test may take it meanwhile, so a start
 * that meets EADDRINUSE is tried again on another port.
 */
export async function startGsfChild(logging: Record<string, unknown>, plugins: string[]): Promise<GsfChild> {
  for (let attempt = 1; ; attempt++) {
    const c = await spawnChild(logging, plugins);
    try {
      await c.started();
      return c;
    } catch (err) {
      await c.stop();
      if (attempt === 3 || !c.err().includes('EADDRINUSE')) throw err;
    }
  }
}

async function spawnChild(logging: Record<string, unknown>, plugins: string[]) {
  const held = await holdPort();
  const port = held.port;
  held.release();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-child-'));
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'ApiService', arguments: { api_service_port: port } },
      { name: 'EventDispatcher', arguments: { event_threads_size: 1 } },
      { name: 'Logging', arguments: logging },
    ],
    plugins,
  }));
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let err = '';
  child.stdout.on('data', (d: Buffer) => { out.push(d); });
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  let code: number | null = null;
  const exited = new Promise<number | null>((resolve) => child.on('close', (c) => { code = c; resolve(c); }));
  const url = `http://127.0.0.1:${port}`;
  return {
    dir, url,
    out: () => Buffer.concat(out).toString('utf8'),
    err: () => err,
    /** A file the child wrote in its folder (a relative log_file), or '' when it has none. */
    file: (name: string): string => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : ''),
    exitCode: () => code,
    started: () => waitFor(() => code === null ? fetch(`${url}/v1/status`).then((r) => r.ok, () => false) : Promise.reject(new Error(`exited ${code}: ${err}`)), 30000, 'the server to answer'),
    /** SIGTERM, then the child's folder is removed. */
    stop: async () => {
      if (code === null) {
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
