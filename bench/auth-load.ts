/**
 * A small HTTP/1.1 load generator for bench/auth: raw keep-alive sockets, each keeping `depth`
 * identical POSTs in flight (pipelined), counting complete responses. It does far less work
 * per request than node:http, so one core can saturate a one-core server.
 */
import net from 'node:net';

export interface LoadOptions {
  port: number;
  path: string;
  body: string;
  connections: number;
  depth: number;
  durationMs: number;
}

export interface LoadResult {
  requestsPerSec: number;
  responses: number;
  /** Responses whose status was not 200 (must be 0). */
  non200: number;
  /** Bodies that differed from the first one seen (must be 0). */
  mismatched: number;
  sample: string;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export async function load(o: LoadOptions): Promise<LoadResult> {
  const request = Buffer.from(`POST ${o.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`
    + `Content-Length: ${Buffer.byteLength(o.body)}\r\n\r\n${o.body}`);
  const batch = Buffer.concat(Array.from({ length: o.depth }, () => request));
  let responses = 0;
  let non200 = 0;
  let mismatched = 0;
  let sample = '';
  let counting = false;
  let stopping = false;
  const sockets: net.Socket[] = [];

  const open = (): Promise<void> => new Promise((resolve, reject) => {
    const s = net.connect(o.port, '127.0.0.1', () => {
      s.setNoDelay(true);
      s.write(batch);
      resolve();
    });
    s.on('error', (err) => { if (!stopping) reject(err); });
    let pending: Buffer = Buffer.alloc(0);
    s.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let done = 0;
      for (;;) {
        const end = pending.indexOf(HEADER_END);
        if (end < 0) break;
        const head = pending.toString('latin1', 0, end);
        const m = /content-length: *(\d+)/i.exec(head);
        const length = m ? Number(m[1]) : 0;
        if (pending.length < end + 4 + length) break;
        const body = pending.toString('utf8', end + 4, end + 4 + length);
        if (sample === '') sample = body;
        else if (body !== sample) mismatched += counting ? 1 : 0;
        if (!head.startsWith('HTTP/1.1 200')) non200 += counting ? 1 : 0;
        pending = pending.subarray(end + 4 + length);
        done++;
      }
      if (done === 0) return;
      if (counting) responses += done;
      if (!stopping) s.write(done === o.depth ? batch : Buffer.concat(Array.from({ length: done }, () => request)));
    });
    sockets.push(s);
  });

  await Promise.all(Array.from({ length: o.connections }, open));
  await new Promise((r) => setTimeout(r, 300)); // warm-up
  counting = true;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, o.durationMs));
  const seconds = (performance.now() - start) / 1000;
  counting = false;
  stopping = true;
  const result = { requestsPerSec: responses / seconds, responses, non200, mismatched, sample };
  for (const s of sockets) s.destroy();
  return result;
}
