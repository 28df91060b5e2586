/** The servers bench/sessions measures, each in its own process as a deployment runs it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { startProcess } from './processes.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Server {
  name: string;
  child: ChildProcess;
  port: number;
}

/**
 * A `gsf start` process with the benchmark plugin (or `plugin`, a folder); `sessionArgs` are
 * added to SessionService's, `apiArgs` to ApiService's.
 */
export async function gsfServer(eventThreads: number, sessionArgs: Record<string, unknown> = {},
  plugin = path.join(here, 'plugins', 'sessions'), apiArgs: Record<string, unknown> = {}): Promise<Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-sessions-'));
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'EventDispatcher', arguments: { event_threads_size: eventThreads, slow_event_log_threshold_in_ms: 60000 } },
      { name: 'ApiService', arguments: { api_service_port: 0, ...apiArgs } },
      { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0, ...sessionArgs } },
    ],
    plugins: [plugin],
  }));
  const started = await startProcess([path.join(here, '..', 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], /websocket=[^:\s]+:(\d+)/);
  return { name: 'gsf', ...started };
}

/** A baseline server of bench/session-baselines.ts in its own process. */
export async function baselineServer(kind: 'uws' | 'uws-hop' | 'ws'): Promise<Server> {
  // An ES module (it awaits at the top level): tsx's ES module loader, whatever this process runs as.
  const started = await startProcess(['--import', 'tsx', path.join(here, 'session-baselines.ts'), kind], /port=(\d+)/);
  return { name: { uws: 'raw uWS', 'uws-hop': 'uWS + worker hop', ws: 'ws' }[kind], ...started };
}
