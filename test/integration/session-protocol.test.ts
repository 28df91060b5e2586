import test from 'ava';
import { Packr } from 'msgpackr';
import { GsfClient, GsfRequestError, CloseCode, ProtocolError } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const packr = new Packr({ useRecords: false });
let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({ SessionService: { max_message_bytes: 1024, max_backpressure_bytes: 65536 } });
});
test.after.always(async () => {
  await s?.stop();
});

async function errorFrame(c: GsfClient, send: () => void): Promise<unknown> {
  const next = c.next('_error');
  send();
  return (await next).body;
}

test.serial('both codecs carry requests, replies and server pushes', async (t) => {
  const json = await s.connect('json');
  const mp = await s.connect('msgpack');
  try {
    t.deepEqual(await json.request('echo', { text: 'héllo', list: [1, 2.5, null] }), { text: 'héllo', list: [1, 2.5, null] });
    t.deepEqual(await mp.request('echo', { text: 'héllo', list: [1, 2.5, null] }), { text: 'héllo', list: [1, 2.5, null] });
    const jsonId = (await json.request<{ sessionId: number }>('whoami')).sessionId;
    const who = await mp.request<{ sessionId: number; tag: number; name: string; kind: string }>('whoami');
    t.is(who.tag, who.sessionId, 'a network event runs on its session tag');
    t.is(who.name, 'whoami', 'the event is named after the message type');
    t.is(who.kind, 'network');
    t.is(jsonId % 2, 0);
    t.is(who.sessionId % 2, 1);
    const pushed = json.next<string>('pushed');
    t.true(await mp.request('push', { to: jsonId, body: 'from msgpack' }));
    t.is((await pushed).body, 'from msgpack');
    const a = json.next('news');
    const b = mp.next('news');
    t.true(await json.request('broadcast', { body: { hi: 1 } }));
    t.deepEqual([(await a).body, (await b).body], [{ hi: 1 }, { hi: 1 }]);
    const later = json.next<{ session: number; tag: number }>('later');
    json.send('later');
    t.deepEqual((await later).body, { session: jsonId, tag: jsonId }, 'a child event keeps the session');
  } finally {
    await json.close();
    await mp.close();
  }
});

test.serial('a handler attached with on() gets the pushes that came before it, in order, then the later ones', async (t) => {
  const [a, b] = await Promise.all([s.connect('json'), s.connect('msgpack')]);
  try {
    const bId = (await b.request<{ sessionId: number }>('whoami')).sessionId;
    for (const n of [1, 2, 3]) t.true(await a.request('push', { to: bId, body: n }));
    // The three pushes are in before the handler: their replies came after them on b's tag order.
    t.is(await b.request('echo', 'sync'), 'sync');
    const got: unknown[] = [];
    b.on('pushed', (body) => got.push(body));
    t.deepEqual(got, [], 'delivered after on() returns');
    t.true(await a.request('push', { to: bId, body: 4 }));
    await waitFor(() => got.length === 4, 10000, 'four pushes');
    t.deepEqual(got, [1, 2, 3, 4]);
    t.is((b as unknown as { backlog: unknown[] }).backlog.length, 0);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test.serial('groups: join, publish to members of both codecs, leave', async (t) => {
  const [a, b, c] = await Promise.all([s.connect('json'), s.connect('msgpack'), s.connect('json')]);
  try {
    t.true(await a.request('group', { group: 'room1', join: true }));
    t.true(await b.request('group', { group: 'room1', join: true }));
    const na = a.next('group.news');
    const nb = b.next('group.news');
    t.true(await c.request('publish', { group: 'room1', body: { text: 'hi room' } }));
    t.deepEqual([(await na).body, (await nb).body], [{ text: 'hi room' }, { text: 'hi room' }]);
    t.true(await b.request('group', { group: 'room1', join: false }));
    t.true(await c.request('publish', { group: 'room1', body: 2 }));
    t.is((await a.next('group.news')).body, 2);
    t.is(await b.request('echo', 'b saw nothing'), 'b saw nothing');
    t.is(await c.request('echo', 'c saw nothing'), 'c saw nothing');
    t.deepEqual([b, c].map((x) => (x as unknown as { backlog: unknown[] }).backlog.length), [0, 0]);
  } finally {
    await Promise.all([a.close(), b.close(), c.close()]);
  }
});

test.serial('bad input on a json session: exact error frames, and the session stays usable', async (t) => {
  const c = await s.connect('json');
  try {
    const cases: Array<[string | Uint8Array, unknown]> = [
      ['not json', { code: ProtocolError.badJson, message: 'message is not valid JSON: Unexpected token \'o\', "not json" is not valid JSON' }],
      ['{"type":"echo",', { code: ProtocolError.badJson, message: 'message is not valid JSON: Expected double-quoted property name in JSON at position 15' }],
      ['[1,2]', { code: ProtocolError.malformed, message: 'a message must be an object {type, body}' }],
      ['{"type":5}', { code: ProtocolError.malformed, message: "a message needs a non-empty string 'type'" }],
      ['{"body":1}', { code: ProtocolError.malformed, message: "a message needs a non-empty string 'type'" }],
      ['{"type":"echo","id":"x"}', { code: ProtocolError.malformed, message: "'id' must be an integer", type: 'echo' }],
      ['{"type":"echo","extra":1}', { code: ProtocolError.malformed, message: "unknown envelope key 'extra' (allowed: type, body, id)", type: 'echo' }],
      ['{"type":"nope","body":1}', { code: ProtocolError.unknownType, message: "no handler for message type 'nope'", type: 'nope' }],
      ['{"body":1,"type":"nope"}', { code: ProtocolError.unknownType, message: "no handler for message type 'nope'", type: 'nope' }],
      ['{"type":"_maintenance","body":1}', { code: ProtocolError.unknownType, message: "no handler for message type '_maintenance'", type: '_maintenance' }],
      [JSON.stringify({ type: 'echo', body: 'x'.repeat(2000) }), { code: ProtocolError.tooBig, message: 'message of 2025 bytes exceeds the limit of 1024 bytes' }],
      [packr.pack({ type: 'echo', body: 1 }), { code: ProtocolError.wrongFrame, message: 'binary frame on a json session (json uses text frames, msgpack binary frames)' }],
    ];
    for (const [frame, expected] of cases) {
      t.deepEqual(await errorFrame(c, () => c.sendRaw(frame)), expected, String(frame));
    }
    t.deepEqual(await c.request('echo', 'still here'), 'still here');
  } finally {
    await c.close();
  }
});

test.serial('bad input on a msgpack session: exact error frames', async (t) => {
  const c = await s.connect('msgpack');
  try {
    const cases: Array<[string | Uint8Array, unknown]> = [
      [new Uint8Array([0x82, 0xa4]), { code: ProtocolError.badMsgpack, message: 'message is not valid msgpack: Offset is outside the bounds of the DataView' }],
      [packr.pack([1, 2]), { code: ProtocolError.malformed, message: 'a message must be an object {type, body}' }],
      [packr.pack({ type: '' }), { code: ProtocolError.malformed, message: "a message needs a non-empty string 'type'" }],
      [packr.pack({ body: 1, type: 'nope' }), { code: ProtocolError.unknownType, message: "no handler for message type 'nope'", type: 'nope' }],
      [packr.pack({ type: 'nope', body: 1 }), { code: ProtocolError.unknownType, message: "no handler for message type 'nope'", type: 'nope' }],
      [packr.pack({ type: 'echo', body: new Uint8Array(1100) }), { code: ProtocolError.tooBig, message: 'message of 1121 bytes exceeds the limit of 1024 bytes' }],
      ['{"type":"echo"}', { code: ProtocolError.wrongFrame, message: 'text frame on a msgpack session (json uses text frames, msgpack binary frames)' }],
    ];
    for (const [frame, expected] of cases) {
      t.deepEqual(await errorFrame(c, () => c.sendRaw(frame)), expected, String(frame));
    }
    t.deepEqual(await c.request('echo', [1, 'two']), [1, 'two']);
  } finally {
    await c.close();
  }
});

test.serial('requests get their error frame by id: unknown type and a failing handler', async (t) => {
  const c = await s.connect('msgpack');
  try {
    const unknown = await t.throwsAsync(c.request('nope', 1), { instanceOf: GsfRequestError });
    t.is(unknown.code, ProtocolError.unknownType);
    t.is(unknown.message, "no handler for message type 'nope'");
    const failed = await t.throwsAsync(c.request('fail', 1), { instanceOf: GsfRequestError });
    t.is(failed.code, ProtocolError.handlerFailed);
    t.is(failed.message, "the handler of 'fail' failed");
    t.is(await c.request('echo', 7), 7);
  } finally {
    await c.close();
  }
  t.true(s.logs().some((l) => l.includes("message handler 'fail' failed: this handler always fails")));
});

test.serial('a message far over the limit drops the connection (1006, no close frame); the server stays up', async (t) => {
  const c = await s.connect('json');
  c.sendRaw(JSON.stringify({ type: 'echo', body: 'x'.repeat(10_000) }));
  const closed = await c.closed;
  t.is(closed.code, 1006);
  const d = await s.connect('json');
  t.is(await d.request('echo', 1), 1);
  await d.close();
});

test.serial('unknown codec is refused with close code 4002', async (t) => {
  const c = await GsfClient.connect({ url: s.url, version: '1.0.0', codec: 'xml' as 'json' });
  t.deepEqual(await c.closed, { code: CloseCode.badCodec, reason: "codec must be json or msgpack (got 'xml')" });
});

test.serial('a client that does not read is closed with 4008 when its send buffer passes the limit', async (t) => {
  const c = await s.connect('json');
  const closedBefore = activeSessions!.listener.stats.backpressureCloses;
  const socket = (c as unknown as { ws: { _socket: { pause(): void; resume(): void } } }).ws._socket;
  socket.pause();
  c.send('flood', { count: 3000, size: 8000 });
  await new Promise((r) => setTimeout(r, 300));
  socket.resume();
  const closed = await c.closed;
  t.deepEqual(closed, { code: CloseCode.backpressure, reason: 'send buffer limit exceeded' });
  t.is(activeSessions!.listener.stats.backpressureCloses, closedBefore + 1);
});

test.serial('plugin close reaches the client with 4010 and the reason', async (t) => {
  const c = await s.connect('json');
  c.send('kick', { reason: 'bye now' });
  t.deepEqual(await c.closed, { code: CloseCode.closedByServer, reason: 'bye now' });
});
