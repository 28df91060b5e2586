/**
 * The WebSocket load of bench/sessions: the kinds of frames clients send, and `load()`, which
 * runs bench/ws-load-worker.ts on worker threads against one server and merges what they saw.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { workerExecArgv } from '../src/events/main/dispatcher.ts';
import type { LoadResult, LoadTask } from './ws-load-worker.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const packr = new Packr({ useRecords: false });
const BODY = { n: 1, text: 'hello' };

/** A kind of client frame: its bytes, its codec, and how replies and errors look in that codec. */
export interface FrameKind {
  name: 'json' | 'json-varied' | 'msgpack';
  label: string;
  codec: 'json' | 'msgpack';
  message: Uint8Array;
  binary: boolean;
  expect: Uint8Array;
  errorMark: Uint8Array;
}

/** A msgpack fixstr key followed by a fixstr value, as the `type` entry of a map is written. */
function msgpackEntry(key: string, value: string): Uint8Array {
  return Buffer.concat([Buffer.from([0xa0 | key.length]), Buffer.from(key), Buffer.from([0xa0 | value.length]), Buffer.from(value)]);
}

export const FRAMES: Record<FrameKind['name'], FrameKind> = {
  json: {
    name: 'json', label: 'JSON, canonical frames', codec: 'json', binary: false,
    message: Buffer.from(JSON.stringify({ type: 'echo', body: BODY })),
    expect: Buffer.from('"type":"echo"'), errorMark: Buffer.from('"type":"_error"'),
  },
  // The body first: valid JSON, but not the form the server reads without parsing the envelope.
  'json-varied': {
    name: 'json-varied', label: 'JSON, body before type', codec: 'json', binary: false,
    message: Buffer.from(JSON.stringify({ body: BODY, type: 'echo' })),
    expect: Buffer.from('"type":"echo"'), errorMark: Buffer.from('"type":"_error"'),
  },
  msgpack: {
    name: 'msgpack', label: 'msgpack', codec: 'msgpack', binary: true,
    message: packr.pack({ type: 'echo', body: BODY }),
    expect: msgpackEntry('type', 'echo'), errorMark: msgpackEntry('type', '_error'),
  },
};

export const LOAD_THREADS = Number(process.env.GSF_BENCH_LOAD_THREADS ?? 2);
export const CONNECTIONS = Number(process.env.GSF_BENCH_CONNECTIONS ?? 64);
export const WINDOW = Number(process.env.GSF_BENCH_WINDOW ?? 32);
export const DURATION_MS = Number(process.env.GSF_BENCH_DURATION_MS ?? 4000);
export const WARMUP_MS = 1000;

/** A load-generator thread (a TypeScript module, loaded through tsx's CommonJS hook as event workers are). */
export function loadWorker(task: LoadTask): Worker {
  const file = path.join(here, 'ws-load-worker.ts');
  const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(file)});`;
  return new Worker(code, { eval: true, workerData: task, execArgv: workerExecArgv() });
}

export interface Load {
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Messages sent, `_error` frames and other unexpected frames in the measured window. */
  sent: number;
  errors: number;
  others: number;
  seconds: number;
}

export interface LoadOptions {
  mode: LoadTask['mode'];
  frames?: FrameKind;
  threads?: number;
  connections?: number;
  ratePerSec?: number;
  intervalMs?: number;
  durationMs?: number;
  /** Called when every thread's measured window has started, and when the first one ends. */
  onWindow?: (edge: 'start' | 'end') => void;
  /** A first message per connection (all threads' connections, in order) and its answer's mark: see LoadTask.greet. */
  greet?: Uint8Array[];
  greetMark?: Uint8Array;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! / 1000;
}

/** Runs the generator against `port` and merges the threads' results. */
export async function load(port: number, o: LoadOptions): Promise<Load> {
  const frames = o.frames ?? FRAMES.json;
  const threads = o.threads ?? LOAD_THREADS;
  const connections = o.connections ?? CONNECTIONS;
  let counting = 0;
  let ended = false;
  const share = (i: number): number => Math.floor(connections / threads) + (i < connections % threads ? 1 : 0);
  const results = await Promise.all(Array.from({ length: threads }, (_, i) => new Promise<LoadResult>((resolve, reject) => {
    const first = Array.from({ length: i }, (_, k) => share(k)).reduce((a, n) => a + n, 0);
    const task: LoadTask = {
      host: '127.0.0.1', port, path: `/?version=1.0.0&codec=${frames.codec}`,
      connections: share(i), mode: o.mode,
      ...(o.greet ? { greet: o.greet.slice(first, first + share(i)), greetMark: o.greetMark } : {}),
      message: frames.message, binary: frames.binary, expect: frames.expect, errorMark: frames.errorMark,
      window: WINDOW, warmupMs: WARMUP_MS, durationMs: o.durationMs ?? DURATION_MS,
      ratePerSec: (o.ratePerSec ?? 0) / threads, intervalMs: o.intervalMs ?? 0,
    };
    const w = loadWorker(task);
    w.on('message', (m: { counting?: boolean; done?: LoadResult; error?: string }) => {
      if (m.counting && ++counting === threads) o.onWindow?.('start');
      if (m.done && !ended) {
        ended = true;
        o.onWindow?.('end');
      }
      if (m.done) resolve(m.done);
      if (m.error) reject(new Error(m.error));
      if (m.done || m.error) void w.terminate();
    });
    w.on('error', reject);
  })));
  const sum = (f: (r: LoadResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  const seconds = Math.max(...results.map((r) => r.seconds));
  const rtts = results.flatMap((r) => r.rtts).sort((a, b) => a - b);
  return {
    perSec: sum((r) => r.replies) / seconds, p50Ms: percentile(rtts, 0.5), p99Ms: percentile(rtts, 0.99),
    sent: sum((r) => r.sent), errors: sum((r) => r.errors), others: sum((r) => r.others), seconds,
  };
}

/** The median of `xs`. */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}
