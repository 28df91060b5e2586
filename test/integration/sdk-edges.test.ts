/**
 * The client SDK at its edges: error frames answer the request they refuse (too big, malformed),
 * requests pending at a close carry their type (and a send after it throws), close reasons are cut to fit and close codes the
 * WebSocket API refuses are refused, a connect with no handshake times out, a negative or
 * NaN time limit is refused, kept pushes reach a handler set later in arrival order (or stay
 * kept), a handler added while a push is handed out gets only later ones, late replies are
 * never pushes, and typed arrays travel as their bytes in msgpack wherever they are.
 */
import test from 'ava';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { GsfClient, GsfRequestError } from '../../src/sdk/index.ts';
import { startSessionServer, type SessionServer } from './_session.ts';
import { waitFor } from './_server.ts';

/** A ws server on loopback that accepts connections and never answers a message. */
async function silentServer(): Promise<{ url: string; wss: WebSocketServer; stop(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => ws.on('error', () => {}));
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    wss,
    stop: async () => { for (const c of wss.clients) c.terminate(); await new Promise<void>((r) => wss.close(() => r())); },
  };
}

let s: SessionServer;
test.before(async () => {
  s = await startSessionServer({ SessionService: { max_message_bytes: 4096 } });
});
test.after.always(async () => { await s?.stop(); });

for (const codec of ['json', 'msgpack'] as const) {
  test.serial(`${codec}: a request the server answers with an _error frame (too big, empty type) rejects with the server's code`, async (t) => {
    const c = await s.connect(codec);
    try {
      // The _error frames carry the request's id: without it the request would wait out its time
      // limit and end as 'timeout'.
      const big = await t.throwsAsync(c.request('echo', 'x'.repeat(5000))) as GsfRequestError;
      const empty = await t.throwsAsync(c.request('', {})) as GsfRequestError;
      t.deepEqual([big.code, empty.code], ['GSF_ERR_MESSAGE_TOO_BIG', 'GSF_ERR_MESSAGE_MALFORMED']);
      t.is(empty.message, "a message needs a non-empty string 'type'");
      // The connection goes on.
      t.is(await c.request('echo', 'still here'), 'still here');
    } finally {
      await c.close();
    }
  });
}

test.serial('a request pending when the connection ends is rejected with its message type, like one made after, and a send after throws', async (t) => {
  const srv = await silentServer();
  try {
    const c = await GsfClient.connect({ url: srv.url, version: '1' });
    const failure = (p: Promise<unknown>): Promise<GsfRequestError> => p.then(() => { throw new Error('resolved'); }, (e: GsfRequestError) => e);
    const pending = failure(c.request('chat.join', {}));
    const next = failure(c.next('chat.line'));
    await c.close();
    const after = await failure(c.request('chat.join', {}));
    const [p, n] = await Promise.all([pending, next]);
    t.deepEqual([p.code, n.code, after.code], ['closed', 'closed', 'closed']);
    t.is(n.type, 'chat.line');
    t.is(after.type, 'chat.join');
    t.is(p.type, 'chat.join');
    // A send after the end throws the same code rather than vanishing.
    const sent = t.throws(() => c.send('chat.say', { text: 'hi' }), { instanceOf: GsfRequestError });
    t.like(sent, { code: 'closed', type: 'chat.say', message: "'chat.say' not sent: connection closed: 1000 " });
  } finally {
    await srv.stop();
  }
});

test.serial('close() with a reason over 123 bytes does not throw: it closes and resolves', async (t) => {
  const srv = await silentServer();
  try {
    const c = await GsfClient.connect({ url: srv.url, version: '1' });
    const info = await c.close(4000, `player left: ${'é'.repeat(100)}`);
    t.is(info.code, 4000);
    // Cut at a whole character within 123 bytes: 13 bytes of ASCII and 55 two-byte characters.
    t.is(info.reason, `player left: ${'é'.repeat(55)}`);
    t.false(c.open);
    // A code the WebSocket API refuses rejects; it does not throw.
    const other = await GsfClient.connect({ url: srv.url, version: '1' });
    await t.throwsAsync(other.close(1006));
    await other.close();
  } finally {
    await srv.stop();
  }
});

test.serial('connect to a server that accepts TCP but never answers the handshake settles', async (t) => {
  const sockets: net.Socket[] = [];
  const tcp = net.createServer((sock) => { sockets.push(sock); sock.on('error', () => {}); });
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
  try {
    const url = `ws://127.0.0.1:${(tcp.address() as AddressInfo).port}`;
    await t.throwsAsync(GsfClient.connect({ url, version: '1', connectTimeoutMs: 200 }),
      { message: `cannot connect to ${url}: no WebSocket handshake within 200 ms` });
  } finally {
    for (const so of sockets) so.destroy();
    await new Promise<void>((r) => tcp.close(() => r()));
  }
});

test.serial('a time limit that is negative or NaN is refused with a RangeError naming it, for connect and for a request alike', async (t) => {
  const srv = await silentServer();
  let sockets = 0;
  srv.wss.on('connection', () => { sockets++; });
  try {
    const why = (name: string, v: number): string => `${name} must be a number of ms, 0 or more (0 or Infinity: no limit) (got ${String(v)})`;
    for (const v of [-1, -0.5, Number.NaN, Number.NEGATIVE_INFINITY]) {
      // A negative connectTimeoutMs was no limit, a negative requestTimeoutMs a timeout at once.
      await t.throwsAsync(GsfClient.connect({ url: srv.url, version: '1', connectTimeoutMs: v }), { instanceOf: RangeError, message: why('connectTimeoutMs', v) });
      await t.throwsAsync(GsfClient.connect({ url: srv.url, version: '1', requestTimeoutMs: v }), { instanceOf: RangeError, message: why('requestTimeoutMs', v) });
    }
    await t.throwsAsync(GsfClient.connect({ url: srv.url, version: '1', connectTimeoutMs: '200' as unknown as number }),
      { instanceOf: TypeError, message: 'connectTimeoutMs must be a number of ms (got string)' });

    // 0 is no limit, for both options; a request's own limit follows the same rule.
    const c = await GsfClient.connect({ url: srv.url, version: '1', connectTimeoutMs: 0, requestTimeoutMs: 0 });
    try {
      // The server saw this connection's handshake before it answered it: any earlier one too.
      t.is(sockets, 1, 'the refused options opened no socket');
      for (const v of [-1, Number.NaN, Number.NEGATIVE_INFINITY]) {
        await t.throwsAsync(c.request('x', {}, v), { instanceOf: RangeError, message: why('timeoutMs', v) });
      }
      const sent: unknown[] = [];
      const [server] = [...srv.wss.clients];
      server!.on('message', (m) => sent.push(String(m)));
      const timedOut = await t.throwsAsync(c.request('y', {}, 50)) as GsfRequestError;
      t.is(timedOut.code, 'timeout');
      t.is(timedOut.message, "no reply to 'y' within 50 ms");
      // Only the request with a valid limit reached the server (its id is the first one taken).
      await waitFor(() => sent.length === 1, 5000, 'the one request');
      t.deepEqual(sent.map((m) => JSON.parse(m as string)), [{ type: 'y', body: {}, id: 1 }]);
    } finally {
      await c.close();
    }
  } finally {
    await srv.stop();
  }
});

test.serial('close() with a code the WebSocket API refuses rejects, whatever the WebSocket, and the connection stays open', async (t) => {
  const server = await silentServer();
  const c = await GsfClient.connect({ url: server.url, version: '1' });
  try {
    // The ws package would send 1001–1014; a browser refuses all but 1000 and 3000–4999; gsf's
    // server takes 3000–3999 for a protocol error (the code and reason would be lost).
    for (const code of [1001, 1003, 1014, 2999, 3000, 3999, 5000, 4000.5]) {
      await t.throwsAsync(c.close(code, 'odd code'), { instanceOf: RangeError, message: `close code must be 1000 or from 4000 to 4999 (got ${code})` });
    }
    t.true(c.open);
    t.deepEqual(await c.close(4000, 'done'), { code: 4000, reason: 'done' });
  } finally {
    await server.stop();
  }
});

/** An unmasked server text frame (payload under 126 bytes). */
function textFrame(envelope: unknown): Buffer {
  const payload = Buffer.from(JSON.stringify(envelope));
  return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
}

/** A ws server that, on the client's n-th message, writes `batches[n]` in one socket write (one read on the client). */
async function pushServer(...batches: Buffer[][]): Promise<{ url: string; stop(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws: WebSocket) => {
    ws.on('error', () => {});
    let n = 0;
    ws.on('message', () => { (ws as unknown as { _socket: Socket })._socket.write(Buffer.concat(batches[n++] ?? [])); });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    stop: async () => { for (const c of wss.clients) c.terminate(); await new Promise<void>((r) => wss.close(() => r())); },
  };
}

test.serial('on(type) set from another push\'s handler gets the kept push of its type before a later one', async (t) => {
  // 'tick' 1 arrives while nothing handles 'tick' (kept), then 'start', whose handler subscribes
  // to 'tick', then 'tick' 2, all in one read: the kept one comes first.
  const server = await pushServer([textFrame({ type: 'tick', body: 1 }), textFrame({ type: 'start', body: null }), textFrame({ type: 'tick', body: 2 })]);
  const c = await GsfClient.connect({ url: server.url, version: '1' });
  try {
    const ticks: unknown[] = [];
    c.on('start', () => { c.on('tick', (n) => ticks.push(n)); });
    c.send('go');
    await waitFor(() => ticks.length === 2, 5000, 'two ticks');
    t.deepEqual(ticks, [1, 2]);
  } finally {
    await c.close();
    await server.stop();
  }
});

test.serial('a kept push stays kept when on(type) is undone before it ran: next(type) gets it', async (t) => {
  const server = await pushServer(
    [textFrame({ type: 'welcome', body: { motd: 'hi' } }), textFrame({ type: 'sync', body: null })],
    [textFrame({ type: 'welcome', body: { motd: 'later' } })],
  );
  const c = await GsfClient.connect({ url: server.url, version: '1' });
  try {
    c.send('go');
    await c.next('sync');
    const got: unknown[] = [];
    const off = c.on('welcome', (b) => got.push(b));
    off();
    await new Promise<void>((r) => setImmediate(r)); // past the microtask that would have run it
    c.send('go again');
    t.deepEqual((await c.next('welcome')).body, { motd: 'hi' });
    t.deepEqual((await c.next('welcome')).body, { motd: 'later' });
    t.deepEqual(got, []);
  } finally {
    await c.close();
    await server.stop();
  }
});

test.serial('msgpack: a typed array in a body reaches the server as its bytes', async (t) => {
  const c = await s.connect('msgpack');
  try {
    // An earlier message leaves its bytes in the encoder's buffer: none of them may travel again.
    await c.request('echo', { token: 'an-earlier-message-0123456789abcdef' });
    for (const array of [new Float32Array([1.5, -2.25, 3.75]), new Int16Array([300, -2, 7]), new Float64Array([0.1])]) {
      const sent = Array.from(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
      const echoed = await c.request('echo', { at: [array], n: 1 }) as { at: Uint8Array[]; n: number };
      t.deepEqual(Array.from(echoed.at[0]!), sent, array.constructor.name);
      t.is(echoed.n, 1);
    }
    const back = await c.request('echo', new Float32Array([1.5, -2.25])) as Uint8Array;
    t.deepEqual(Array.from(new Float32Array(back.slice().buffer)), [1.5, -2.25]);
  } finally {
    await c.close();
  }
});

class Vec {
  constructor(readonly data: Float32Array) {}
}

test.serial('msgpack: a typed array in a class instance, a Map or a Set travels as its bytes too', async (t) => {
  const c = await s.connect('msgpack');
  try {
    const f = new Float32Array([1.5, -2.25]);
    const want = Array.from(new Uint8Array(f.buffer));
    // msgpackr writes a class instance as a map of its fields, a Map as a map, a Set as an array.
    const inClass = await c.request<{ v: { data: Uint8Array } }>('echo', { v: new Vec(f) });
    t.deepEqual(Array.from(inClass.v.data), want, 'class instance');
    const inMap = await c.request<{ pos: Uint8Array }>('echo', new Map([['pos', f]]));
    t.deepEqual(Array.from(inMap.pos), want, 'Map');
    const inSet = await c.request<Uint8Array[]>('echo', { s: new Set([f]) }) as unknown as { s: Uint8Array[] };
    t.deepEqual(Array.from(inSet.s[0]!), want, 'Set');
    // Values msgpackr writes as themselves are left as they are.
    t.deepEqual(await c.request('echo', { at: new Date(0), v: new Vec(new Float32Array(0)) }), { at: new Date(0), v: { data: new Uint8Array(0) } });
  } finally {
    await c.close();
  }
});

test.serial('a handler that re-arms itself (off, then on a fresh one) runs once per push, not in a loop', async (t) => {
  const c = await s.connect('json');
  try {
    const { sessionId } = await c.request<{ sessionId: number }>('whoami');
    const got: unknown[] = [];
    // A "once" that subscribes again for the next push; capped so a loop cannot hang the test.
    const arm = (): void => {
      const off = c.on('pushed', (body) => { off(); got.push(body); if (got.length < 20) arm(); });
    };
    arm();
    await c.request('push', { to: sessionId, body: 'first' });
    await waitFor(() => got.length >= 1, 5000, 'the first push');
    await c.request('push', { to: sessionId, body: 'second' });
    await waitFor(() => got.length >= 2, 5000, 'the second push');
    t.deepEqual(got, ['first', 'second']);
  } finally {
    await c.close();
  }
});

test.serial('a handler added while a push is handed out gets the pushes after it, not that one', async (t) => {
  const c = await s.connect('json');
  try {
    const { sessionId } = await c.request<{ sessionId: number }>('whoami');
    const late: unknown[] = [];
    let added = false;
    c.on('pushed', () => {
      if (!added) { added = true; c.on('pushed', (b) => late.push(b)); }
    });
    await c.request('push', { to: sessionId, body: 1 });
    await c.request('push', { to: sessionId, body: 2 });
    await waitFor(() => late.includes(2), 5000, 'push 2');
    t.deepEqual(late, [2]);
  } finally {
    await c.close();
  }
});

test.serial('late replies to any number of timed-out requests are dropped, none is taken for a push', async (t) => {
  const c = await s.connect('json');
  try {
    const pushes: unknown[] = [];
    c.on('echo', (body) => pushes.push(body));
    // The session's messages run in order: every echo waits behind a handler busy for 800 ms.
    const stall = c.request('slow', { ms: 800 }, 0);
    const codes = await Promise.all(Array.from({ length: 1200 }, (_, i) =>
      c.request('echo', i, 100).then(() => 'replied', (e: GsfRequestError) => e.code)));
    t.deepEqual([...new Set(codes)], ['timeout']);
    await stall;
    // Replies leave in order: when this one arrives, all 1200 late ones have come and gone.
    t.is(await c.request('echo', 'last', 0), 'last');
    t.deepEqual(pushes, []);
  } finally {
    await c.close();
  }
});
