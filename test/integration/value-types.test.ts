/**
 * Unusual value types crossing boundaries: event payloads, replies, pushes, client frames and
 * counters. Fixture: test/fixtures/plugins/value-types (`make(kind)` builds the values).
 */
import test from 'ava';
import path from 'node:path';
import WebSocket from 'ws';
import { pack, unpack } from 'msgpackr';
import { GsfClient, GsfRequestError } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const PLUGIN = path.join(fixtures, 'plugins', 'value-types');

interface Conn { ws: WebSocket; frames: unknown[] }
async function open(url: string, codec: 'json' | 'msgpack'): Promise<Conn> {
  const ws = new WebSocket(`${url}/?version=1.0.0&codec=${codec}`);
  const frames: unknown[] = [];
  ws.on('message', (data, isBinary) => {
    try {
      frames.push(isBinary ? unpack(data as Buffer) : JSON.parse(String(data)));
    } catch (err) {
      frames.push({ undecodable: (err as Error).message, bytes: (data as Buffer).toString('hex') });
    }
  });
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  return { ws, frames };
}
const frameWithId = (c: Conn, id: number, ms = 3000) =>
  waitFor(() => c.frames.find((f) => (f as { id?: number }).id === id), ms, `the frame with id ${id}`);

const connect = (s: SessionServer, codec: 'json' | 'msgpack') =>
  GsfClient.connect({ url: s.url, version: '1.0.0', codec, requestTimeoutMs: 4000 });

test.serial('an invoke whose payload holds a Map with an object key neither kills the event worker nor loses the next request', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const c = await connect(s, 'json');
    const invoked: unknown[] = [];
    c.on('invoked', (b) => invoked.push(b));
    // msgpack carries the Map, but cannot read such a key back: the invoked event fails with a
    // line, and its thread serves on.
    const r = await c.request<{ ok?: boolean; error?: { code?: string } }>('invoke', { kind: 'mapObjKey' });
    t.deepEqual(r, { ok: true });
    const failed = () => s.logs().filter((l) => l.includes("the event's payload cannot be decoded"));
    await waitFor(() => failed().length > 0, 10000, 'the failed event\'s line');
    t.regex(failed()[0]!, /GSF_ERR_HANDLER_FAILED: plugin 'value-types' event 'value-types\.got' failed: the event's payload cannot be decoded \(Invalid property type for record: object\): a Map's keys must be strings, numbers or booleans/);
    t.deepEqual(invoked, []);
    t.deepEqual(s.logs().filter((l) => l.includes('failed and is replaced') || l.includes('worker exited')), []);
    // The session goes on: its next request is answered at once.
    t.is(await c.request('echo', 'after'), 'after');
    await c.close();
  } finally {
    await s.stop();
  }
});

test.serial('a body holding a symbol: publish, and reply/send to a msgpack session, throw GSF_ERR_BAD_ARGUMENT, not a bare Error', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const j = await connect(s, 'json');
    const m = await connect(s, 'msgpack');
    type R = { error?: { name: string; code?: string; message: string } };
    const nameCode = (r: R) => [r.error?.name, r.error?.code];
    // publish encodes for both codecs, whatever the sender's.
    t.deepEqual(nameCode(await j.request<R>('trySend', { kind: 'symbol', how: 'publish' })), ['GsfError', 'GSF_ERR_BAD_ARGUMENT'], 'publish');
    t.deepEqual(nameCode(await m.request<R>('trySend', { kind: 'symbol', how: 'send' })), ['GsfError', 'GSF_ERR_BAD_ARGUMENT'], 'send');
    t.deepEqual(nameCode(await m.request<R>('tryReply', { kind: 'symbol' })), ['GsfError', 'GSF_ERR_BAD_ARGUMENT'], 'reply');
    await Promise.all([j.close(), m.close()]);
  } finally {
    await s.stop();
  }
});

test.serial('api.invoke with a symbol in its payload throws GSF_ERR_BAD_ARGUMENT, not a bare Error', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const j = await connect(s, 'json');
    const r = await j.request<{ error?: { name: string; code?: string } }>('invoke', { kind: 'bareSymbol' });
    t.deepEqual([r.error?.name, r.error?.code], ['GsfError', 'GSF_ERR_BAD_ARGUMENT']);
    await j.close();
  } finally {
    await s.stop();
  }
});

test.serial('a msgpack request whose body holds an unknown ext type gets GSF_ERR_MESSAGE_BAD_MSGPACK with its id', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const m = await open(s.url, 'msgpack');
    // {type: 'echo', body: fixext1(type 1, 0x05), id: 3}, in the SDK's canonical order (the id ends it).
    m.ws.send(Buffer.from('83a474797065a46563686fa4626f6479d40105a2696403', 'hex'));
    // A Map with a map key, as msgpackr packs a JS Map keyed by objects: {type:'echo', body:{{a:1}:1}, id:4}.
    m.ws.send(Buffer.from('83a474797065a46563686fa4626f647981' + '81a16101' + '01a2696404', 'hex'));
    await waitFor(() => m.frames.length >= 2, 3000, 'two answers');
    t.deepEqual(m.frames, [
      { type: '_error', body: { code: 'GSF_ERR_MESSAGE_BAD_MSGPACK', message: 'message is not valid msgpack: Unknown extension 1' }, id: 3 },
      { type: '_error', body: { code: 'GSF_ERR_MESSAGE_BAD_MSGPACK', message: 'message is not valid msgpack: Invalid property type for record: object' }, id: 4 },
    ]);
    m.ws.terminate();
  } finally {
    await s.stop();
  }
});

test.serial('an integer counter increased past int64 within an event: what increase returned is what is stored', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const c = await connect(s, 'json');
    t.deepEqual(await c.request('counter', { how: 'increase', amount: 1 }), { r: 'number:1', read: 'number:1' });
    await waitFor(() => native.counterReadInt('probe_types', 'c') === 1, 3000, 'the first increase');
    const r = await c.request<{ r: string; read: string }>('counter', { how: 'increase', amount: 'num:1e19' });
    await waitFor(() => native.counterReadInt('probe_types', 'c') !== 1, 3000, 'the second increase');
    const stored = native.counterReadInt('probe_types', 'c');
    t.is(r.r, `number:${stored}`, `increase returned ${r.r}; the counter holds ${stored}`);
    t.is(r.read, `number:${stored}`);
    await c.close();
  } finally {
    await s.stop();
  }
});

test.serial('values that hold: int64 round trips in msgpack, BigInt to JSON is GSF_ERR_BAD_ARGUMENT, JSON forms of NaN, -0, Date, undefined, sparse and lone surrogates', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const m = await open(s.url, 'msgpack');
    m.ws.send(pack({ type: 'echo', body: { v: 2n ** 60n, w: -(2n ** 62n) }, id: 1 }));
    t.deepEqual(await frameWithId(m, 1), { type: 'echo', body: { v: 2n ** 60n, w: -(2n ** 62n) }, id: 1 });
    m.ws.send(pack({ type: 'echo', body: 1, id: 2n ** 60n }));
    t.deepEqual(await waitFor(() => m.frames[1]), { type: '_error', body: { code: 'GSF_ERR_MESSAGE_MALFORMED', message: "'id' must be an integer", type: 'echo' } });
    m.ws.terminate();
    const j = await connect(s, 'json');
    const bad = { name: 'GsfError', code: 'GSF_ERR_BAD_ARGUMENT', message: 'reply: the body cannot be encoded (Do not know how to serialize a BigInt)' };
    t.deepEqual(await j.request('tryReply', { kind: 'bigint' }), { error: bad });
    const err = await t.throwsAsync(j.request('reply', { kind: 'bareBigint' }));
    t.is((err as GsfRequestError).code, 'GSF_ERR_MESSAGE_HANDLER_FAILED');
    for (const [kind, want] of [['nan', { v: null }], ['negzero', { v: 0 }], ['date', { v: '2023-11-14T22:13:20.000Z' }],
      ['undefInArray', { v: [1, null, 3] }], ['undefInObject', { v: 1 }], ['sparse', { v: [null, null, null, 'x'] }],
      ['lone', { v: 'a\ud800b' }], ['topToJSON', { j: 1 }], ['class', { v: { x: 3, y: 4 } }], ['string', 'plain string']] as const) {
      t.deepEqual(await j.request('tryReply', { kind }), want, kind);
    }
    t.is(await j.request('tryReply', { kind: 'bareUndefined' }), undefined);
    await j.close();
  } finally {
    await s.stop();
  }
});

test.serial('a msgpack reply the SDK cannot decode (a Map keyed by an object) rejects its request with code undecodable', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const c = await GsfClient.connect({ url: s.url, version: '1.0.0', codec: 'msgpack', requestTimeoutMs: 0 });
    const err = await c.request('tryReply', { kind: 'mapObjKey' }).catch((e: unknown) => e);
    t.true(err instanceof GsfRequestError);
    t.like(err as GsfRequestError, {
      code: 'undecodable', type: 'tryReply',
      message: "the reply to 'tryReply' cannot be decoded: Invalid property type for record: object",
    });
    // The connection goes on.
    t.is(await c.request('echo', 'after'), 'after');
    await c.close();
  } finally {
    await s.stop();
  }
});
