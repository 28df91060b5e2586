/**
 * One thread of bench/cluster's load: pairs of raw RFC 6455 sockets. A pair's sender talks to
 * one server and sends `relay {to}` frames naming the pair's receiver session, which is on the
 * same server or another one; the receiver counts the `relayed` frames it gets. A message's
 * latency is from the sender's write to the receiver's read, on this thread's clock.
 *
 * Modes: `peak` keeps `window` messages per pair in flight (sent and not yet received) for
 * `durationMs`; `rate` sends `ratePerSec` messages per second spread over the pairs and records
 * every message's latency (a pair's messages arrive in the order they were sent).
 */
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface RelayTask {
  host: string;
  senderPort: number;
  receiverPort: number;
  pairs: number;
  mode: 'peak' | 'rate';
  window: number;
  ratePerSec: number;
  warmupMs: number;
  durationMs: number;
}

export interface RelayResult {
  /** `relayed` frames received, and messages sent, in the measured window. */
  delivered: number;
  sent: number;
  /** Frames of another type the receivers got (errors). */
  others: number;
  seconds: number;
  /** Latencies in microseconds (rate mode). */
  latencies: number[];
}

const task = workerData as RelayTask;
const RELAYED = Buffer.from('"type":"relayed"');
const counting = { on: false, delivered: 0, others: 0 };

function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x81, 0x80 | len, 0, 0, 0, 0]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff, 0, 0, 0, 0]);
  return Buffer.concat([head, payload]);
}

/** A WebSocket client on a raw socket: calls `onFrame` with each data frame's payload. */
function open(port: number, onFrame: (payload: Buffer) => void): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, task.host);
    socket.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let upgraded = false;
    socket.on('error', reject);
    socket.on('connect', () => socket.write(`GET /?version=1.0.0&codec=json HTTP/1.1\r\nHost: ${task.host}:${port}\r\nUpgrade: websocket\r\n` +
      'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        upgraded = true;
        buf = buf.subarray(end + 4);
        resolve(socket);
      }
      let off = 0;
      while (buf.length - off >= 2) {
        let len = buf[off + 1]! & 0x7f;
        let head = 2;
        if (len === 126) {
          if (buf.length - off < 4) break;
          len = buf.readUInt16BE(off + 2);
          head = 4;
        }
        if (buf.length - off < head + len) break;
        const op = buf[off]! & 0x0f;
        if (op === 1 || op === 2) onFrame(buf.subarray(off + head, off + head + len));
        off += head + len;
      }
      buf = off === buf.length ? Buffer.alloc(0) : buf.subarray(off);
    });
  });
}

interface Pair {
  sender: net.Socket;
  receiver: net.Socket;
  frame: Buffer;
  batch: Buffer;
  inFlight: number;
  sentAt: number[];
}

async function makePair(): Promise<Pair> {
  let answered: (id: number) => void = () => undefined;
  const id = new Promise<number>((r) => { answered = r; });
  const pair = { inFlight: 0, sentAt: [] as number[] } as Pair;
  const receiver = await open(task.receiverPort, (payload) => {
    if (payload.indexOf(RELAYED) >= 0) {
      delivered(pair);
      return;
    }
    const whoami = /"id":(\d+)/.exec(payload.toString());
    if (whoami) answered(Number(whoami[1]));
    else if (counting.on) counting.others++;
  });
  receiver.write(clientFrame('{"type":"whoami","body":null}'));
  pair.receiver = receiver;
  const to = await id;
  pair.sender = await open(task.senderPort, () => undefined);
  pair.frame = clientFrame(`{"type":"relay","body":{"to":${to}}}`);
  pair.batch = Buffer.concat(Array.from({ length: task.window }, () => pair.frame));
  return pair;
}

const latencies: number[] = [];
let sent = 0;

function write(p: Pair, n: number): void {
  p.sender.write(n === task.window ? p.batch : p.batch.subarray(0, n * p.frame.length));
  if (counting.on) sent += n;
}

function delivered(p: Pair): void {
  if (counting.on) counting.delivered++;
  p.inFlight--;
  if (task.mode === 'peak') {
    if (p.inFlight <= task.window * 0.75) {
      const n = task.window - p.inFlight;
      p.inFlight += n;
      write(p, n);
    }
  } else {
    const at = p.sentAt.shift();
    if (counting.on && at !== undefined) latencies.push(Math.round((performance.now() - at) * 1000));
  }
}

async function main(): Promise<RelayResult> {
  const pairs: Pair[] = [];
  for (let i = 0; i < task.pairs; i++) pairs.push(await makePair());
  let timer: NodeJS.Timeout | null = null;
  if (task.mode === 'peak') {
    for (const p of pairs) {
      p.inFlight = task.window;
      write(p, task.window);
    }
  } else {
    const start = performance.now();
    let due = 0;
    let next = 0;
    timer = setInterval(() => {
      const now = performance.now();
      for (const target = Math.floor(((now - start) / 1000) * task.ratePerSec); due < target; due++) {
        const p = pairs[next]!;
        next = (next + 1) % pairs.length;
        p.sentAt.push(now);
        p.inFlight++;
        write(p, 1);
      }
    }, 1);
  }
  await new Promise((r) => setTimeout(r, task.warmupMs));
  counting.on = true;
  const t0 = performance.now();
  parentPort!.postMessage({ counting: true });
  await new Promise((r) => setTimeout(r, task.durationMs));
  counting.on = false;
  const seconds = (performance.now() - t0) / 1000;
  if (timer) clearInterval(timer);
  for (const p of pairs) {
    p.sender.destroy();
    p.receiver.destroy();
  }
  return { delivered: counting.delivered, sent, others: counting.others, seconds, latencies };
}

main().then((r) => parentPort!.postMessage({ done: r }), (err: unknown) => parentPort!.postMessage({ error: String(err) }));
