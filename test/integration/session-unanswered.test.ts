/**
 * A client message whose event will never finish still gets an answer, with its request id: an
 * `_error` frame `GSF_ERR_MESSAGE_TIMEOUT` for the one that timed out, `GSF_ERR_MESSAGE_DROPPED`
 * for those cancelled behind it and for those abandoned or lost with their ended event thread,
 * in the order the session sent them; the session goes on.
 */
import test from 'ava';
import WebSocket from 'ws';
import { GsfClient, GsfRequestError } from '../../src/sdk/index.ts';
import type { CodecName } from '../../src/session/protocol.ts';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';

/** Settles `p` to its value or its error's code, message and type, and notes the order it settled in. */
function settled(p: Promise<unknown>, order: string[], name: string): Promise<unknown> {
  return p.then((v) => {
    order.push(name);
    return { value: v };
  }, (err: unknown) => {
    order.push(name);
    return err instanceof GsfRequestError ? { code: err.code, message: err.message, type: err.type } : { other: String(err) };
  });
}

const connect = (url: string, codec: CodecName): Promise<GsfClient> => GsfClient.connect({ url, version: '1.0.0', codec, requestTimeoutMs: 8000 });

for (const codec of ['json', 'msgpack'] as const) {
  test.serial(`${codec}: a request whose handler runs past the timeout, and the one behind it, are answered with error frames`, async (t) => {
    const s = await startSessionServer({ EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 2 } });
    try {
      const c = await connect(s.url, codec);
      const order: string[] = [];
      const slow = settled(c.request('slow', { ms: 3000 }), order, 'slow');
      const behind = settled(c.request('echo', 'behind'), order, 'behind');
      t.deepEqual(await slow, { code: 'GSF_ERR_MESSAGE_TIMEOUT', message: "the handler of 'slow' did not finish within the event timeout", type: 'slow' });
      t.deepEqual(await behind, { code: 'GSF_ERR_MESSAGE_DROPPED', message: "message 'echo' was dropped unanswered: an earlier message of this session timed out", type: 'echo' });
      t.deepEqual(order, ['slow', 'behind']);
      t.is(await c.request('echo', 'after'), 'after');
      await c.close();
    } finally {
      await s.stop();
    }
  });
}

test.serial('a request whose handler awaits past the timeout is answered, and so is the one behind it', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 2 } });
  try {
    const c = await connect(s.url, 'json');
    const order: string[] = [];
    const hang = settled(c.request('hang'), order, 'hang');
    const behind = settled(c.request('echo', 'behind'), order, 'behind');
    t.deepEqual(await hang, { code: 'GSF_ERR_MESSAGE_TIMEOUT', message: "the handler of 'hang' did not finish within the event timeout", type: 'hang' });
    t.deepEqual(await behind, { code: 'GSF_ERR_MESSAGE_DROPPED', message: "message 'echo' was dropped unanswered: an earlier message of this session timed out", type: 'echo' });
    t.deepEqual(order, ['hang', 'behind']);
    t.is(await c.request('echo', 'after'), 'after');
    await c.close();
  } finally {
    await s.stop();
  }
});

test.serial('an event thread that exits on its own: the request it ran and the one awaiting there are answered, their tags freed', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_timeout_in_ms: 60000, event_threads_size: 1 } });
  try {
    const a = await connect(s.url, 'msgpack');
    const b = await connect(s.url, 'json');
    const order: string[] = [];
    const hang = settled(a.request('hang'), order, 'hang');
    // One event thread: once another session's request is answered, the hang has started and awaits.
    t.is(await b.request('echo', 'first'), 'first');
    const end = settled(b.request('end-thread'), order, 'end-thread');
    t.deepEqual(await hang, { code: 'GSF_ERR_MESSAGE_DROPPED', message: "message 'hang' was dropped unanswered: its event thread was ended while its handler awaited", type: 'hang' });
    t.deepEqual(await end, { code: 'GSF_ERR_MESSAGE_DROPPED', message: "message 'end-thread' was dropped unanswered: its event thread exited while its handler ran", type: 'end-thread' });
    // Both tags are free again, and a new event thread serves.
    t.is(await b.request('echo', 'still here'), 'still here');
    t.is(await a.request('echo', 'and here'), 'and here');
    t.is(s.server.dispatcher.totals.lost, 1);
    t.is(s.server.dispatcher.totals.abandoned, 1);
    await a.close();
    await b.close();
  } finally {
    await s.stop();
  }
});

test.serial('a request lost with its event thread is answered before the replies to the requests sent behind it', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_timeout_in_ms: 60000, event_threads_size: 2 } });
  try {
    const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
    const got: Array<{ type: string; body?: { code?: string }; id?: number }> = [];
    ws.on('message', (data: Buffer) => got.push(JSON.parse(data.toString()) as typeof got[number]));
    await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
    ws.send(JSON.stringify({ type: 'end-thread', id: 1 }));
    for (let id = 2; id <= 5; id++) ws.send(JSON.stringify({ type: 'echo', body: id, id }));
    await waitFor(() => got.length >= 5, 10000, 'five answers');
    t.deepEqual(got.map((g) => [g.id, g.type === '_error' ? g.body!.code : g.type]), [
      [1, 'GSF_ERR_MESSAGE_DROPPED'], [2, 'echo'], [3, 'echo'], [4, 'echo'], [5, 'echo'],
    ]);
    t.is(s.server.dispatcher.totals.lost, 1);
    ws.close();
  } finally {
    await s.stop();
  }
});
