/** Runs the HTTP load generator in a worker thread and returns requests per second. */
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
}

export function httpLoad(options: LoadOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(path.join(here, 'http-load-worker.mjs'), { workerData: options });
    worker.once('message', (r: { responses: number; seconds: number }) => {
      resolve(r.responses / r.seconds);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}
