/**
 * Native continuations answer the client message their handler runs for, as a managed handler
 * replies after an await: a reply from an object, account or result continuation (and from a
 * chain of them) carries the request's type and id; a continuation that fails after an answer
 * gets the client an error frame with the request id, also when the event holds objects; and an
 * event a continuation invokes after an answer from the main thread runs without waiting for the
 * client's next message; children invoked before and after a continuation are numbered in the
 * event's creation order (SPEC 6.3); and a handler whose object changes conflict runs again on
 * its own frame. Real WebSocket sessions, real workers, the real addon, real SQLite.
 */
import path from 'node:path';
import test from 'ava';
import WebSocket from 'ws';
import { Packr } from 'msgpackr';
import { EngineType, ProtocolError } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const packr = new Packr({ useRecords: false });
type Codec = 'json' | 'msgpack';
interface Frame { type: string; id?: number; body?: unknown }

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } },
    ['objects-probe', path.join(fixtures, 'native-plugins', 'native-continue')]);
});
test.after.always(async () => {
  await s?.stop();
});

/** A raw client: every frame it gets, decoded, in arrival order. */
async function rawClient(codec: Codec): Promise<{ ws: WebSocket; frames: Frame[]; send(f: Frame): void; nextFrames(n: number): Promise<Frame[]> }> {
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=${codec}`);
  const frames: Frame[] = [];
  ws.on('message', (data: Buffer, binary: boolean) => {
    frames.push((binary ? packr.unpack(data) : JSON.parse(data.toString('utf8'))) as Frame);
  });
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  let seen = 0;
  return {
    ws, frames,
    send: (f) => ws.send(codec === 'json' ? JSON.stringify(f) : packr.pack(f)),
    /** The next `n` frames after those already taken. */
    nextFrames: async (n) => {
      const from = seen;
      seen += n;
      await waitFor(() => frames.length >= from + n, 10000, `${n} frame(s) after ${from}`);
      return frames.slice(from, from + n);
    },
  };
}

for (const codec of ['json', 'msgpack'] as const) {
  test.serial(`replies from object, result and account continuations answer the request's type and id (${codec})`, async (t) => {
    const c = await rawClient(codec);
    try {
      c.send({ type: 'nc.fetch', id: 11, body: { id: 'nc-none' } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.fetch', id: 11, body: { found: false } }]);
      c.send({ type: 'nc.create', id: 12, body: { name: `created-${codec}` } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.create', id: 12, body: { status: 0, id: true } }]);
      c.send({ type: 'nc.login', id: 13, body: { account: `ada-${codec}` } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.login', id: 13, body: { login: 0, account: `ada-${codec}` } }]);
      // An account answer, then an object, then a result: the third continuation still answers request 14.
      c.send({ type: 'nc.chain', id: 14, body: { name: `chained-${codec}` } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.chain', id: 14, body: { steps: 3, account: `chained-${codec}`, found: false } }]);
      // A message without an id gets a reply without one.
      c.send({ type: 'nc.fetch', body: { id: 'nc-none' } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.fetch', body: { found: false } }]);
    } finally {
      c.ws.close();
    }
  });

  test.serial(`a continuation that fails after an account answer, in an event holding an object, answers the request with an error (${codec})`, async (t) => {
    const c = await rawClient(codec);
    try {
      c.send({ type: 'nc.fail', id: 21 });
      t.deepEqual(await c.nextFrames(1), [{
        type: EngineType.error, id: 21,
        body: { code: ProtocolError.handlerFailed, message: "the handler of 'nc.fail' failed", type: 'nc.fail' },
      }]);
      const line = await waitFor(() => s.logs().find((l) => l.includes('nc.fail gave up after the account answer')), 10000, 'the failure line');
      t.true(line.includes("plugin 'native-continue' message handler 'nc.fail' failed: INVALID_ARGUMENT"), line);
      // The session goes on: its next request is answered.
      c.send({ type: 'nc.fetch', id: 22, body: { id: 'nc-none' } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.fetch', id: 22, body: { found: false } }]);
    } finally {
      c.ws.close();
    }
  });

  test.serial(`a handler or continuation that fails after its reply is logged, and its request keeps the one answer (${codec})`, async (t) => {
    const c = await rawClient(codec);
    try {
      for (const [type, id] of [['nc.reply-fail', 41], ['nc.reply-then-fail', 42]] as const) {
        c.send({ type, id });
        c.send({ type: 'nc.fetch', id: id + 100, body: { id: 'nc-none' } });
        t.deepEqual(await c.nextFrames(2), [{ type, id, body: {} }, { type: 'nc.fetch', id: id + 100, body: { found: false } }]);
        const line = await waitFor(() => s.logs().find((l) => l.includes(`${type} gave up after its reply`)), 10000, 'the failure line');
        t.true(line.includes(`plugin 'native-continue' message handler '${type}' failed: INTERNAL`), line);
      }
      t.is(c.frames.length, 4);
      // Logged in, the account answer comes within the call: the reply still counts.
      c.send({ type: 'nc.login', id: 43, body: { account: `replier-${codec}` } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.login', id: 43, body: { login: 0, account: `replier-${codec}` } }]);
      const answered = native.counterValue('engine', 'native_account_answers') ?? 0;
      c.send({ type: 'nc.reply-then-fail', id: 44 });
      c.send({ type: 'nc.fetch', id: 144, body: { id: 'nc-none' } });
      t.deepEqual(await c.nextFrames(2), [{ type: 'nc.reply-then-fail', id: 44, body: {} }, { type: 'nc.fetch', id: 144, body: { found: false } }]);
      t.is(native.counterValue('engine', 'native_account_answers'), answered + 1);
      t.is(c.frames.length, 7);
    } finally {
      c.ws.close();
    }
  });

  test.serial(`children invoked before and after continuing are numbered in the event's creation order (${codec})`, async (t) => {
    const c = await rawClient(codec);
    const records = (parent: string): Frame[] => [`${parent}_#1`, 'nc.named-child', `${parent}_#3`, `${parent}_#4`]
      .map((name) => ({ type: 'nc.record', body: { name } }));
    try {
      // Not logged in: each account answer comes from the account manager, through the worker.
      c.send({ type: 'nc.children', id: 51 });
      t.deepEqual(await c.nextFrames(5), [{ type: 'nc.children', id: 51, body: {} }, ...records('nc.children')]);
      // Logged in: the addon answers account_of within the call, continuations included.
      c.send({ type: 'nc.login', id: 52, body: { account: `kids-${codec}` } });
      t.deepEqual(await c.nextFrames(1), [{ type: 'nc.login', id: 52, body: { login: 0, account: `kids-${codec}` } }]);
      const answered = native.counterValue('engine', 'native_account_answers') ?? 0;
      c.send({ type: 'nc.children', id: 53 });
      t.deepEqual(await c.nextFrames(5), [{ type: 'nc.children', id: 53, body: {} }, ...records('nc.children')]);
      t.is(native.counterValue('engine', 'native_account_answers'), answered + 2);
      // A native event handler (run by the worker in the addon) that continues.
      c.send({ type: 'nc.spawn', id: 54 });
      t.deepEqual(await c.nextFrames(6), [{ type: 'nc.spawn', id: 54, body: {} }, { type: 'nc.spawned', body: {} }, ...records('nc.spawner')]);
    } finally {
      c.ws.close();
    }
  });

  test.serial(`an event invoked from a continuation after an account answer runs without another client message (${codec})`, async (t) => {
    const c = await rawClient(codec);
    try {
      for (let id = 31; id <= 35; id++) {
        c.send({ type: 'nc.invoke', id });
        // The reply and the child's push, and nothing else sent meanwhile.
        const got = await c.nextFrames(2);
        t.deepEqual(got.map((f) => f.type).sort(), ['nc.child', 'nc.invoke']);
        t.deepEqual(got.find((f) => f.type === 'nc.invoke'), { type: 'nc.invoke', id, body: {} });
      }
    } finally {
      c.ws.close();
    }
  });
}

test.serial('concurrent handlers that change one object conflict and run again on their own frames: every request answered once, in order of commit', async (t) => {
  const first = await rawClient('json');
  first.send({ type: 'nc.bump', id: 1, body: { name: 'bumped' } });
  t.deepEqual(await first.nextFrames(1), [{ type: 'nc.bump', id: 1, body: { coins: 1 } }]);
  first.ws.close();
  // Sessions of both codecs, each with three bumps in flight: their events run on different tags
  // at once, fetch the same object for write, and all but one of each round conflict.
  const clients = await Promise.all(Array.from({ length: 8 }, (_, k) => rawClient(k % 2 === 0 ? 'json' : 'msgpack')));
  try {
    clients.forEach((c, k) => { for (let j = 0; j < 3; j++) c.send({ type: 'nc.bump', id: 100 * k + j, body: { name: 'bumped' } }); });
    const replies = await Promise.all(clients.map((c) => c.nextFrames(3)));
    const coins: number[] = [];
    replies.forEach((frames, k) => {
      t.deepEqual(frames.map((f) => [f.type, f.id]), [0, 1, 2].map((j) => ['nc.bump', 100 * k + j]));
      // A session's bumps commit in its order.
      const mine = frames.map((f) => (f.body as { coins: number }).coins);
      t.deepEqual(mine, [...mine].sort((a, b) => a - b));
      coins.push(...mine);
    });
    t.deepEqual(coins.sort((a, b) => a - b), Array.from({ length: 24 }, (_, i) => i + 2));
  } finally {
    for (const c of clients) c.ws.close();
  }
});

test.serial('every continuation\'s user data is released once', async (t) => {
  const kept = native.counterValue('native_continue', 'kept') ?? 0;
  t.true(kept > 0);
  t.is(await waitFor(() => (native.counterValue('native_continue', 'drops') === kept ? kept : null), 10000, 'every drop'), kept);
});
