/**
 * The client SDK at its edges: error frames answer the request they refuse (too big, malformed),
 * requests pending at a close carry their type, close reasons are cut to fit, a connect with no
 * handshake times out, and a time limit already passed times out at once.
 */
import test from 'ava';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { GsfClient, GsfRequestError } from '../../src/sdk/index.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

/** A ws server on loopback that accepts connections and never answers a message. */
async function silentServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => ws.on('error', () => {}));
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
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

test.serial('a request pending when the connection ends is rejected with its message type, like one made after', async (t) => {
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

test.serial('a request with a negative time limit (a deadline already passed) times out instead of waiting forever', async (t) => {
  const srv = await silentServer();
  try {
    const c = await GsfClient.connect({ url: srv.url, version: '1' });
    for (const limit of [-1, Number.NaN]) {
      const err = await t.throwsAsync(c.request('x', {}, limit)) as GsfRequestError;
      t.is(err.code, 'timeout', String(limit));
    }
    await c.close();
  } finally {
    await srv.stop();
  }
});
