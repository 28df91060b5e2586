/**
 * A listener binds its port alone. uWebSockets.js sets SO_REUSEPORT by default, so a second
 * server started on the ports of a running one used to start as well and take part of its
 * connections. Now the start stops with the reason, whichever of the two binds first, and the
 * session service's I/O threads, which do share their port, first check that nobody else holds it.
 */
import test from 'ava';
import uWS from 'uWebSockets.js';
import { startTestServer, type TestServer } from './_server.ts';
import { startSessionServer } from './_session.ts';
import { holdPort } from './_ports.ts';

const TAKEN = '(EADDRINUSE: another process listens on this port)';
/** uWebSockets.js's ListenOptions. */
const LISTEN_DEFAULT = 0, LISTEN_EXCLUSIVE_PORT = 1;

/** A uWebSockets.js listener with its default options (SO_REUSEPORT), as another server's. */
async function sharingListener(): Promise<{ port: number; close(): void }> {
  for (;;) {
    const held = await holdPort();
    const port = held.port;
    held.release();
    const socket = await new Promise<uWS.us_listen_socket | false>((resolve) => uWS.App().listen('127.0.0.1', port, resolve));
    if (socket) return { port, close: () => uWS.us_listen_socket_close(socket) };
  }
}

/** A server on 127.0.0.1, its API and (with `ws`) its sessions on the given ports. */
function startOn(api: number, ws: number | null, ioThreads = 1): Promise<TestServer> {
  return startTestServer({
    ApiService: { api_service_address: '127.0.0.1', api_service_port: api },
    ...(ws === null ? {} : { SessionService: { websocket_address: '127.0.0.1', websocket_port: ws, io_threads_size: ioThreads } }),
  }, ws === null ? ['probe'] : ['session-probe']);
}

test.serial('the API port of a running server cannot be listened on again, with or without SO_REUSEPORT', async (t) => {
  const s = await startTestServer({ ApiService: { api_service_address: '127.0.0.1' } });
  try {
    t.false(await joins(s.server.api.port, LISTEN_DEFAULT), 'a listener with SO_REUSEPORT joined the API port');
    t.false(await joins(s.server.api.port, LISTEN_EXCLUSIVE_PORT), 'a listener binding alone got the API port');
  } finally {
    await s.stop();
  }
});

test.serial('a server whose API port another listener shares with SO_REUSEPORT does not start', async (t) => {
  const other = await sharingListener();
  try {
    await t.throwsAsync(startOn(other.port, null), { message: `ApiService: cannot listen on 127.0.0.1:${other.port} ${TAKEN}` });
  } finally {
    other.close();
  }
});

for (const ioThreads of [1, 2]) {
  test.serial(`a server whose WebSocket port another listener shares does not start (io_threads_size ${ioThreads})`, async (t) => {
    const other = await sharingListener();
    try {
      await t.throwsAsync(startOn(0, other.port, ioThreads), { message: `SessionService: cannot listen on 127.0.0.1:${other.port} ${TAKEN}` });
    } finally {
      other.close();
    }
  });

  test.serial(`the WebSocket port of a running server cannot be joined by another server (io_threads_size ${ioThreads})`, async (t) => {
    const s = await startSessionServer({ SessionService: { io_threads_size: ioThreads } });
    try {
      // Another gsf binds alone first (its API and session listener, or its I/O threads' check).
      t.false(await joins(s.wsPort, LISTEN_EXCLUSIVE_PORT), 'a listener binding alone got the WebSocket port');
      // One thread binds alone too; the I/O threads share their port (SO_REUSEPORT), so a program
      // that sets it as well can join them (docs/reference/manifest.md).
      t.is(await joins(s.wsPort, LISTEN_DEFAULT), ioThreads > 1);
      // The server's own threads serve it still.
      const c = await s.connect();
      t.deepEqual(await c.request('echo', { n: 1 }), { n: 1 });
      c.close();
    } finally {
      await s.stop();
    }
  });
}

/** Whether a uWebSockets.js listener with `options` can listen on `port` now (it is closed at once). */
function joins(port: number, options: number): Promise<boolean> {
  const app = uWS.App() as unknown as { listen(host: string, port: number, options: number, cb: (s: uWS.us_listen_socket | false) => void): void };
  return new Promise((resolve) => app.listen('127.0.0.1', port, options, (socket) => {
    if (socket) uWS.us_listen_socket_close(socket);
    resolve(!!socket);
  }));
}

test.serial('a server restarted at once on its ports listens again, while the connections the stop closed are in TIME_WAIT', async (t) => {
  const api = await holdPort();
  const ws = await holdPort();
  const [apiPort, wsPort] = [api.port, ws.port];
  api.release();
  ws.release();
  const first = await startOn(apiPort, wsPort);
  // A keep-alive read (a dashboard's, a scraper's), closed by the stopping server.
  const r = await fetch(`http://127.0.0.1:${apiPort}/v1/counters/process/cpu/`);
  t.is(r.status, 200);
  await r.text();
  await first.stop();
  const second = await startOn(apiPort, wsPort);
  try {
    t.is((await fetch(`http://127.0.0.1:${apiPort}/v1/counters/process/cpu/`)).status, 200);
  } finally {
    await second.stop();
  }
});
