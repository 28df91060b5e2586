/**
 * One thread of the WebSocket load generator: raw `node:net` sockets that speak just enough
 * RFC 6455 to pipeline pre-encoded, pre-masked client frames and count the server's frames.
 * No per-message parsing beyond frame headers, so one thread can push several hundred
 * thousand messages per second.
 *
 * Modes:
 * - `peak`: every connection keeps `window` messages in flight for `durationMs`; reports replies.
 * - `rate`: sends `ratePerSec` messages per second spread over the connections, and records
 *   each reply's round trip (replies of a connection come back in send order).
 * - `idle`: opens the connections and holds them until told to close.
 */
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface LoadTask {
  host: string;
  port: number;
  path: string;
  connections: number;
  mode: 'peak' | 'rate' | 'idle';
  /** The message every client sends (a text frame). */
  message: string;
  window: number;
  warmupMs: number;
  durationMs: number;
  ratePerSec: number;
}

export interface LoadResult {
  replies: number;
  seconds: number;
  /** Round trips in microseconds (rate mode). */
  rtts: number[];
  errors: number;
}

const task = workerData as LoadTask;

/** A masked client text frame with a zero mask key (XOR with zero leaves the payload as is). */
function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x81, 0x80 | len, 0, 0, 0, 0])
    : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff, 0, 0, 0, 0]);
  return Buffer.concat([head, payload]);
}

class Conn {
  private buf: Buffer = Buffer.alloc(0);
  private upgraded = false;
  readonly sent: number[] = [];
  inFlight = 0;
  onFrame: () => void = () => {};

  constructor(readonly socket: net.Socket, ready: () => void, fail: (e: Error) => void) {
    socket.setNoDelay(true);
    socket.on('error', fail);
    socket.on('data', (chunk: Buffer) => {
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
      if (!this.upgraded) {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!this.buf.subarray(0, 12).toString().includes('101')) {
          fail(new Error(`upgrade refused: ${this.buf.subarray(0, end).toString()}`));
          return;
        }
        this.upgraded = true;
        this.buf = this.buf.subarray(end + 4);
        ready();
      }
      this.parse();
    });
  }

  private parse(): void {
    let off = 0;
    const b = this.buf;
    while (b.length - off >= 2) {
      let len = b[off + 1]! & 0x7f;
      let head = 2;
      if (len === 126) {
        if (b.length - off < 4) break;
        len = b.readUInt16BE(off + 2);
        head = 4;
      } else if (len === 127) {
        if (b.length - off < 10) break;
        len = Number(b.readBigUInt64BE(off + 2));
        head = 10;
      }
      if (b.length - off < head + len) break;
      const opcode = b[off]! & 0x0f;
      off += head + len;
      if (opcode === 1 || opcode === 2) this.onFrame();
    }
    this.buf = off === b.length ? Buffer.alloc(0) : b.subarray(off);
  }
}

function connect(): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(task.port, task.host);
    const conn = new Conn(socket, () => resolve(conn), reject);
    socket.on('connect', () => {
      socket.write(`GET ${task.path} HTTP/1.1\r\nHost: ${task.host}:${task.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    });
  });
}

async function main(): Promise<LoadResult> {
  const conns: Conn[] = [];
  for (let i = 0; i < task.connections; i += 200) {
    conns.push(...await Promise.all(Array.from({ length: Math.min(200, task.connections - i) }, connect)));
  }
  parentPort!.postMessage({ connected: conns.length });
  const frame = clientFrame(task.message);
  let replies = 0;
  let counting = false;
  const rtts: number[] = [];

  if (task.mode === 'idle') {
    await new Promise<void>((resolve) => parentPort!.once('message', () => resolve()));
    for (const c of conns) c.socket.destroy();
    return { replies: 0, seconds: 0, rtts, errors: 0 };
  }

  if (task.mode === 'peak') {
    const batch = Buffer.concat(Array.from({ length: task.window }, () => frame));
    for (const c of conns) {
      c.onFrame = () => {
        if (counting) replies++;
        // Refill in chunks of a quarter window: fewer, larger writes.
        if (--c.inFlight <= task.window * 0.75) {
          const n = task.window - c.inFlight;
          c.inFlight += n;
          c.socket.write(n === task.window ? batch : batch.subarray(0, n * frame.length));
        }
      };
      c.inFlight = task.window;
      c.socket.write(batch);
    }
  } else {
    for (const c of conns) {
      c.onFrame = () => {
        const sentAt = c.sent.shift();
        if (counting && sentAt !== undefined) {
          replies++;
          rtts.push(Math.round((performance.now() - sentAt) * 1000));
        }
      };
    }
    // Open loop: every millisecond, send the messages due since the start.
    const start = performance.now();
    let sent = 0;
    let next = 0;
    const batch = Buffer.concat(Array.from({ length: 64 }, () => frame));
    const counts = new Array<number>(conns.length).fill(0);
    const tick = setInterval(() => {
      const due = Math.floor(((performance.now() - start) / 1000) * task.ratePerSec);
      const now = performance.now();
      for (; sent < due; sent++) {
        counts[next]!++;
        conns[next]!.sent.push(now);
        next = (next + 1) % conns.length;
      }
      // One write per connection per tick.
      for (let k = 0; k < conns.length; k++) {
        for (let n = counts[k]!; n > 0; n -= 64) conns[k]!.socket.write(batch.subarray(0, Math.min(n, 64) * frame.length));
        counts[k] = 0;
      }
    }, 1);
    setTimeout(() => clearInterval(tick), task.warmupMs + task.durationMs + 50).unref();
  }
  await new Promise((r) => setTimeout(r, task.warmupMs));
  counting = true;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, task.durationMs));
  counting = false;
  const seconds = (performance.now() - t0) / 1000;
  for (const c of conns) c.socket.destroy();
  return { replies, seconds, rtts, errors: 0 };
}

main().then((r) => parentPort!.postMessage({ done: r }), (err: unknown) => parentPort!.postMessage({ error: String(err) }));
