/**
 * One thread of the WebSocket load generator: raw `node:net` sockets that speak just enough
 * RFC 6455 to pipeline pre-encoded, pre-masked client frames and count the server's frames.
 * No decoding beyond frame headers and a byte search, so one thread can push several hundred
 * thousand messages per second. A server frame counts as a reply only if it carries the
 * expected type (`expect`, its bytes in the codec); `_error` frames and anything else are
 * counted apart. Every frame still answers one message (round trips, window refills).
 *
 * Modes:
 * - `peak`: every connection keeps `window` messages in flight for `durationMs`; reports replies.
 * - `rate`: sends `ratePerSec` messages per second spread over the connections, and records
 *   each reply's round trip (replies of a connection come back in send order).
 * - `paced`: every connection sends one message every `intervalMs` (starts spread over the
 *   interval), as idle-ish players do; records round trips.
 * - `idle`: opens the connections and holds them until told to close.
 * The thread posts `{ counting: true }` when the measured window starts, then `{ done }`.
 */
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface LoadTask {
  host: string;
  port: number;
  path: string;
  connections: number;
  mode: 'peak' | 'rate' | 'paced' | 'idle';
  /** The message every client sends, encoded, and whether it goes in a binary frame. */
  message: Uint8Array;
  binary: boolean;
  /** Bytes every reply of the expected type contains (e.g. `"type":"echo"`). */
  expect: Uint8Array;
  /** Bytes of an error frame's type (e.g. `"type":"_error"`), checked first. */
  errorMark: Uint8Array;
  window: number;
  warmupMs: number;
  durationMs: number;
  ratePerSec: number;
  intervalMs: number;
  /** Rate and paced modes: after the window, stop sending and wait up to this long for every reply (default 0: none). */
  drainMs?: number;
  /** Rate and paced modes: also record when each measured message was sent (`sentAt`). */
  stamps?: boolean;
  /**
   * A first message per connection (by index), sent after the upgrade and answered before any
   * other traffic (a login); its answer is the first frame holding `greetMark`. With greetings,
   * peak mode refills only on replies and errors, so pushes (chat, a leaderboard) count apart.
   */
  greet?: Uint8Array[];
  greetMark?: Uint8Array;
}

export interface LoadResult {
  /** Replies of the expected type in the measured window. */
  replies: number;
  /** `_error` frames in the window. */
  errors: number;
  /** Other frames in the window (neither the expected type nor an error). */
  others: number;
  /** Messages sent in the window. */
  sent: number;
  seconds: number;
  /** Round trips in microseconds (rate and paced modes). */
  rtts: number[];
  /** With `stamps`: when each of `rtts` was sent, ms since the epoch (comparable across threads). */
  sentAt?: number[];
  /** With `drainMs`: messages sent (in the window or before) that got no frame back at all. */
  unanswered?: number;
}

const task = workerData as LoadTask;
const expect = Buffer.from(task.expect);
const errorMark = Buffer.from(task.errorMark);
/** What the frame counter saw; the window flag says whether it counts. */
const seen = { counting: false, replies: 0, errors: 0, others: 0 };

/** Counts one server data frame by what it carries. */
function classify(payload: Buffer): void {
  if (!seen.counting) return;
  if (payload.indexOf(errorMark) >= 0) seen.errors++;
  else if (payload.indexOf(expect) >= 0) seen.replies++;
  else seen.others++;
}

/** A masked client frame with a zero mask key (XOR with zero leaves the payload as is). */
function clientFrame(data: Uint8Array, binary: boolean): Buffer {
  const payload = Buffer.from(data);
  const len = payload.length;
  const op = binary ? 0x82 : 0x81;
  const head = len < 126 ? Buffer.from([op, 0x80 | len, 0, 0, 0, 0])
    : Buffer.from([op, 0x80 | 126, len >> 8, len & 0xff, 0, 0, 0, 0]);
  return Buffer.concat([head, payload]);
}

class Conn {
  private buf: Buffer = Buffer.alloc(0);
  private upgraded = false;
  readonly sent: number[] = [];
  inFlight = 0;
  onFrame: (payload: Buffer) => void = () => {};

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
      if (opcode === 1 || opcode === 2) {
        const payload = b.subarray(off + head, off + head + len);
        classify(payload);
        this.onFrame(payload);
      }
      off += head + len;
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
  if (task.greet) {
    // One after another: first logins of a game may all change one shared object.
    const mark = Buffer.from(task.greetMark!);
    for (const [i, c] of conns.entries()) {
      await new Promise<void>((resolve, reject) => {
        c.onFrame = (payload) => {
          if (payload.indexOf(errorMark) >= 0) reject(new Error(`greeting ${i} failed: ${payload.toString()}`));
          else if (payload.indexOf(mark) >= 0) resolve();
        };
        c.socket.write(clientFrame(task.greet![i]!, task.binary));
      });
    }
  }
  parentPort!.postMessage({ connected: conns.length });
  const frame = clientFrame(task.message, task.binary);
  let sent = 0;
  const rtts: number[] = [];
  const sentAt: number[] = [];
  const origin = performance.timeOrigin;
  const send = (c: Conn, n: number, bytes: Buffer): void => {
    c.socket.write(bytes);
    if (seen.counting) sent += n;
  };

  if (task.mode === 'idle') {
    await new Promise<void>((resolve) => parentPort!.once('message', () => resolve()));
    for (const c of conns) c.socket.destroy();
    return { replies: 0, errors: 0, others: 0, sent: 0, seconds: 0, rtts };
  }

  const timers: Array<ReturnType<typeof setInterval>> = [];
  if (task.mode === 'peak') {
    const batch = Buffer.concat(Array.from({ length: task.window }, () => frame));
    const answers = (payload: Buffer): boolean => !task.greet || payload.indexOf(expect) >= 0 || payload.indexOf(errorMark) >= 0;
    for (const c of conns) {
      c.onFrame = (payload) => {
        if (!answers(payload)) return;
        // Refill in chunks of a quarter window: fewer, larger writes.
        if (--c.inFlight <= task.window * 0.75) {
          const n = task.window - c.inFlight;
          c.inFlight += n;
          send(c, n, n === task.window ? batch : batch.subarray(0, n * frame.length));
        }
      };
      c.inFlight = task.window;
      send(c, task.window, batch);
    }
  } else {
    for (const c of conns) {
      c.onFrame = () => {
        const at = c.sent.shift();
        if (seen.counting && at !== undefined) {
          rtts.push(Math.round((performance.now() - at) * 1000));
          if (task.stamps) sentAt.push(origin + at);
        }
      };
    }
    if (task.mode === 'paced') {
      // Each connection on its own timer, the starts spread evenly over one interval.
      conns.forEach((c, k) => {
        const start = setTimeout(() => {
          const tick = (): void => {
            c.sent.push(performance.now());
            send(c, 1, frame);
          };
          tick();
          timers.push(setInterval(tick, task.intervalMs));
        }, (task.intervalMs * k) / conns.length);
        timers.push(start as unknown as ReturnType<typeof setInterval>);
      });
    } else {
      // Open loop: every millisecond, send the messages due since the start.
      const start = performance.now();
      let due = 0;
      let next = 0;
      const batch = Buffer.concat(Array.from({ length: 64 }, () => frame));
      const counts = new Array<number>(conns.length).fill(0);
      timers.push(setInterval(() => {
        const now = performance.now();
        for (const target = Math.floor(((now - start) / 1000) * task.ratePerSec); due < target; due++) {
          counts[next]!++;
          conns[next]!.sent.push(now);
          next = (next + 1) % conns.length;
        }
        // One write per connection per tick.
        for (let k = 0; k < conns.length; k++) {
          for (let n = counts[k]!; n > 0; n -= 64) send(conns[k]!, Math.min(n, 64), batch.subarray(0, Math.min(n, 64) * frame.length));
          counts[k] = 0;
        }
      }, 1));
    }
  }
  await new Promise((r) => setTimeout(r, task.warmupMs));
  seen.counting = true;
  parentPort!.postMessage({ counting: true });
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, task.durationMs));
  const seconds = (performance.now() - t0) / 1000;
  for (const t of timers) clearInterval(t);
  let unanswered: number | undefined;
  if ((task.drainMs ?? 0) > 0) {
    // Sending has stopped: every message still owed a frame gets until the deadline.
    const deadline = performance.now() + task.drainMs!;
    while (conns.some((c) => c.sent.length > 0) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    unanswered = conns.reduce((n, c) => n + c.sent.length, 0);
  }
  seen.counting = false;
  for (const c of conns) c.socket.destroy();
  return {
    replies: seen.replies, errors: seen.errors, others: seen.others, sent, seconds, rtts,
    ...(task.stamps ? { sentAt } : {}), ...(unanswered !== undefined ? { unanswered } : {}),
  };
}

main().then((r) => parentPort!.postMessage({ done: r }), (err: unknown) => parentPort!.postMessage({ error: String(err) }));
