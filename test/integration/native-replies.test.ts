/**
 * Frames of native message handlers on event workers: the addon writes them straight into the
 * worker's outbound ring when they fit, and hands them to the worker's writer when not (larger
 * than a quarter of the ring, or more than it holds now). Either way a session gets every frame
 * of a call, in the order the handler sent them, before the call's reply or error frame.
 */
import path from 'node:path';
import test from 'ava';
import WebSocket from 'ws';
import { Packr } from 'msgpackr';
import { ProtocolError } from '../../src/sdk/index.ts';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const MiB = 1024 * 1024;
const packr = new Packr({ useRecords: false });
type Codec = 'json' | 'msgpack';
interface Frame { type: string; id?: number; body?: unknown }

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 }, SessionService: { max_backpressure_bytes: 32 * MiB } },
    [path.join(fixtures, 'native-plugins', 'native-replies')]);
});
test.after.always(async () => {
  await s?.stop();
});

/** A raw client: every frame it gets, decoded, in arrival order. */
async function rawClient(codec: Codec): Promise<{ ws: WebSocket; frames: Frame[]; send(f: Frame): void }> {
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=${codec}`);
  const frames: Frame[] = [];
  ws.on('message', (data: Buffer, binary: boolean) => {
    frames.push((binary ? packr.unpack(data) : JSON.parse(data.toString('utf8'))) as Frame);
  });
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  return { ws, frames, send: (f) => ws.send(codec === 'json' ? JSON.stringify(f) : packr.pack(f)) };
}

/** The frames replies.burst sends for {count, size}, then its reply to request `id`. */
function burst(id: number, count: number, size: number): Frame[] {
  const parts: Frame[] = Array.from({ length: count }, (_, i) => ({
    type: 'replies.part', body: { i, text: String.fromCharCode(97 + (i % 26)).repeat(size) },
  }));
  return [...parts, { type: 'replies.burst', id, body: { count } }];
}

/** Large texts compared by length and letter, so a failure message stays readable. */
function summary(frames: Frame[]): unknown[] {
  return frames.map((f) => {
    const body = f.body as { text?: string } | undefined;
    if (typeof body?.text !== 'string') return f;
    const letters = new Set(body.text);
    return { ...f, body: { ...body, text: `${body.text.length} × ${[...letters].join('')}` } };
  });
}

for (const codec of ['json', 'msgpack'] as const) {
  test.serial(`many calls in flight: every frame in order, each call's before its reply (${codec})`, async (t) => {
    const c = await rawClient(codec);
    try {
      const expected: Frame[] = [];
      for (let id = 1; id <= 40; id++) {
        const count = id % 7;
        c.send({ type: 'replies.burst', id, body: { count, size: id } });
        expected.push(...burst(id, count, id));
      }
      await waitFor(() => c.frames.length >= expected.length, 10000, 'every frame');
      t.deepEqual(c.frames, expected);
    } finally {
      c.ws.close();
    }
  });

  test.serial(`large frames, and more than the ring holds, in order (${codec})`, async (t) => {
    const c = await rawClient(codec);
    try {
      // Over a quarter of the ring (4 MiB): carried beside it. Six of 0.9 MiB: more than the
      // ring has room for at once. Three of 300 kB: straight into the ring.
      const calls: Array<[number, number]> = [[1, 2 * MiB], [6, Math.round(0.9 * MiB)], [3, 300_000], [2, 10]];
      const expected: Frame[] = [];
      calls.forEach(([count, size], k) => {
        c.send({ type: 'replies.burst', id: k + 1, body: { count, size } });
        expected.push(...burst(k + 1, count, size));
      });
      await waitFor(() => c.frames.length >= expected.length, 20000, 'every frame');
      t.deepEqual(summary(c.frames), summary(expected));
      t.deepEqual(c.frames, expected);
    } finally {
      c.ws.close();
    }
  });

  test.serial(`a native handler failing after sending: its frames, then the error frame with its id; the log names the plugin (${codec})`, async (t) => {
    const [c, other] = await Promise.all([rawClient(codec), rawClient(codec)]);
    const failures = (): string[] => s.logs().filter((l) => l.includes("message handler 'replies.burst' failed"));
    const logged = failures().length;
    try {
      c.send({ type: 'replies.burst', id: 1, body: { count: 2, size: 3 } });
      c.send({ type: 'replies.burst', id: 2, body: { count: 3, size: 4, fail: true } });
      other.send({ type: 'replies.burst', id: 9, body: { count: 1, size: 5 } });
      c.send({ type: 'replies.burst', id: 3, body: { count: 1, size: 6 } });
      const failed: Frame = {
        type: '_error', id: 2, body: { code: ProtocolError.handlerFailed, message: "the handler of 'replies.burst' failed", type: 'replies.burst' },
      };
      const expected = [...burst(1, 2, 3), ...burst(2, 3, 4).slice(0, 3), failed, ...burst(3, 1, 6)];
      await waitFor(() => c.frames.length >= expected.length && other.frames.length >= 2, 10000, 'every frame');
      t.deepEqual(c.frames, expected);
      t.deepEqual(other.frames, burst(9, 1, 5), 'another session\'s call in flight is answered');
      const line = await waitFor(() => failures()[logged], 10000, 'the log line');
      t.true(line.includes("plugin 'native-replies' message handler 'replies.burst' failed: INTERNAL: failed after 3 parts"), line);
    } finally {
      c.ws.close();
      other.ws.close();
    }
  });
}
