/** Runs the HTTP load generator in a worker thread: `200` answers per second, and how many answers were not 200. */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface LoadOptions {
  port: number;
  path: string;
  connections: number;
  depth: number;
  durationMs: number;
  headers?: Record<string, string>;
  /** Paths to request in turn instead of `path` (each connection starts at its own). */
  paths?: string[];
}

export interface HttpLoadResult {
  /** `200` answers per second. */
  okPerSec: number;
  /** Answers with another status (a benchmark of a working route expects 0). */
  non200: number;
}

export function httpLoad(options: LoadOptions): Promise<HttpLoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(path.join(here, 'http-load-worker.mjs'), { workerData: options });
    worker.once('message', (r: { responses: number; ok: number; seconds: number }) => {
      resolve({ okPerSec: r.ok / r.seconds, non200: r.responses - r.ok });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}
