/** Resident memory per idle session of a `gsf start` process (part of bench/sessions). */
import type { Worker } from 'node:worker_threads';
import { rssKb, stopProcess } from './processes.ts';
import { FRAMES, loadWorker } from './session-load.ts';
import { gsfServer } from './session-servers.ts';
import type { LoadTask } from './ws-load-worker.ts';

const IDLE_SESSIONS = Number(process.env.GSF_BENCH_IDLE_SESSIONS ?? 19_000);

export interface IdleSessions {
  sessions: number;
  bytesPerSession: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

/** RSS per idle session of a `gsf start` child process holding `IDLE_SESSIONS` connections. */
export async function idleSessions(): Promise<IdleSessions> {
  const { child, port } = await gsfServer(2, { idle_timeout_in_sec: 0 });
  try {
    // Two steps: the slope between them leaves out start-up garbage the collector frees later.
    const half = Math.floor(IDLE_SESSIONS / 2);
    // V8's memory reducer shrinks the start-up heap some seconds after start: wait it out.
    await new Promise((r) => setTimeout(r, 10_000));
    const before = rssKb(child.pid!);
    const holders: Worker[] = [];
    const hold = async (connections: number): Promise<number> => {
      const f = FRAMES.json;
      const task: LoadTask = {
        host: '127.0.0.1', port, path: '/?version=1.0.0&codec=json', connections, mode: 'idle',
        message: f.message, binary: f.binary, expect: f.expect, errorMark: f.errorMark,
        window: 0, warmupMs: 0, durationMs: 0, ratePerSec: 0, intervalMs: 0,
      };
      const w = loadWorker(task);
      holders.push(w);
      await new Promise<void>((resolve, reject) => {
        w.on('message', (m: { connected?: number; error?: string }) => {
          if (m.connected !== undefined) resolve();
          if (m.error) reject(new Error(m.error));
        });
        w.on('error', reject);
      });
      await new Promise((r) => setTimeout(r, 5000));
      return rssKb(child.pid!);
    };
    const middle = await hold(half);
    const after = await hold(IDLE_SESSIONS - half);
    for (const w of holders) w.postMessage('close');
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all(holders.map((w) => w.terminate()));
    return {
      sessions: IDLE_SESSIONS,
      bytesPerSession: ((after - middle) * 1024) / (IDLE_SESSIONS - half),
      rssBeforeMb: before / 1024,
      rssAfterMb: after / 1024,
    };
  } finally {
    await stopProcess(child);
  }
}
