/**
 * How a session's requests are answered: in the order they were sent, whoever answers (a
 * handler, or the listener's own checks: too big, wrong frame kind, unknown type), and once
 * each (a handler that replied and then failed is logged, not answered twice).
 */
import test from 'ava';
import path from 'node:path';
import WebSocket from 'ws';
import { Packr } from 'msgpackr';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer;
test.before(async () => {
  s = await startSessionServer({ SessionService: { max_message_bytes: 1024 } },
    [path.join(fixtures, 'plugins', 'session-probe'), path.join(fixtures, 'plugins', 'answers')]);
});
test.after.always(async () => { await s?.stop(); });

interface Frame { type: string; id?: number; body: { code?: string } & Record<string, unknown> }

/** A raw JSON session: what it was sent, parsed, in arrival order. */
async function rawSession(): Promise<{ ws: WebSocket; frames: Frame[] }> {
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
  const frames: Frame[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  return { ws, frames };
}

test.serial('error frames of the listener keep their place behind the reply of an awaiting request', async (t) => {
  const { ws, frames } = await rawSession();
  try {
    ws.send('{"type":"answers.wait","body":{"ms":100},"id":1}');
    ws.send('{"type":"nope","body":1,"id":2}'); // canonical: the type is peeked and refused by the listener
    ws.send('{"body":1,"type":"nope","id":3}'); // the same, in another key order: refused by the worker
    ws.send(`{"type":"echo","body":"${'x'.repeat(2000)}","id":4}`); // over max_message_bytes
    ws.send(Buffer.from('{"type":"echo","body":5,"id":5}'), { binary: true }); // a binary frame on a JSON session
    ws.send('{"type":"echo","body":6,"id":6}');
    await waitFor(() => frames.length === 6, 5000, 'six answers');
    t.deepEqual(frames.map((f) => [f.id, f.type, f.body.code ?? null]), [
      [1, 'answers.wait', null],
      [2, '_error', 'GSF_ERR_MESSAGE_UNKNOWN_TYPE'],
      [3, '_error', 'GSF_ERR_MESSAGE_UNKNOWN_TYPE'],
      [4, '_error', 'GSF_ERR_MESSAGE_TOO_BIG'],
      [undefined, '_error', 'GSF_ERR_MESSAGE_WRONG_FRAME'],
      [6, 'echo', null],
    ]);
  } finally {
    ws.close();
  }
});

test.serial('on a msgpack session too, a refused frame is answered in its turn, as a binary frame', async (t) => {
  const packr = new Packr({ useRecords: false });
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=msgpack`);
  const frames: Array<{ binary: boolean; frame: Frame }> = [];
  ws.on('message', (data: Buffer, binary: boolean) => frames.push({ binary, frame: packr.unpack(data) as Frame }));
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  try {
    ws.send(packr.pack({ type: 'answers.wait', body: { ms: 100 }, id: 1 }));
    ws.send(packr.pack({ type: 'nope', body: 1, id: 2 }));
    ws.send(packr.pack({ type: 'echo', body: 3, id: 3 }));
    await waitFor(() => frames.length === 3, 5000, 'three answers');
    t.deepEqual(frames.map(({ binary, frame }) => [binary, frame.id, frame.type, frame.body.code ?? null]), [
      [true, 1, 'answers.wait', null],
      [true, 2, '_error', 'GSF_ERR_MESSAGE_UNKNOWN_TYPE'],
      [true, 3, 'echo', null],
    ]);
  } finally {
    ws.close();
  }
});

for (const type of ['answers.reply-then-throw', 'answers.await-reply-then-throw']) {
  test.serial(`${type}: the request gets its reply only, and the failure is logged`, async (t) => {
    const { ws, frames } = await rawSession();
    try {
      ws.send(`{"type":"${type}","body":1,"id":7}`);
      ws.send('{"type":"echo","body":"next","id":8}');
      await waitFor(() => frames.some((f) => f.id === 8), 5000, 'the next reply');
      t.deepEqual(frames.map((f) => [f.id, f.type, f.body]), [[7, type, 'replied'], [8, 'echo', 'next']]);
      const why = type === 'answers.reply-then-throw' ? 'failed after its reply' : 'failed after its reply (async)';
      await waitFor(() => s.logs().some((l) => l.includes(`message handler '${type}' failed`) && l.includes(why)), 5000, 'the failure line');
    } finally {
      ws.close();
    }
  });
}

test.serial('through the SDK, a reply then a failure resolves the request and leaves no stray error', async (t) => {
  const c = await s.connect('json');
  try {
    t.is(await c.request('answers.reply-then-throw', 1), 'replied');
    t.is(await c.request('echo', 'next'), 'next');
    t.deepEqual((c as unknown as { backlog: unknown[] }).backlog, []);
  } finally {
    await c.close();
  }
});

test.serial('a handler that fails without a reply answers its request with the failure, once', async (t) => {
  const { ws, frames } = await rawSession();
  try {
    ws.send('{"type":"answers.throw","body":1,"id":9}');
    ws.send('{"type":"echo","body":"next","id":10}');
    await waitFor(() => frames.some((f) => f.id === 10), 5000, 'the next reply');
    t.deepEqual(frames.map((f) => [f.id, f.type, f.body.code ?? f.body]), [[9, '_error', 'GSF_ERR_MESSAGE_HANDLER_FAILED'], [10, 'echo', 'next']]);
  } finally {
    ws.close();
  }
});
