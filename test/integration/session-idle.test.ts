import test from 'ava';
import net from 'node:net';
import { startSessionServer } from './_session.ts';

/** A raw WebSocket client that never answers pings; resolves with what it saw when the server drops it. */
function silentClient(port: number): Promise<{ pings: number; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let upgraded = false;
    let pings = 0;
    let buf = Buffer.alloc(0);
    socket.on('connect', () => socket.write('GET /?version=1.0.0&codec=json HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
      + 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'));
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        upgraded = true;
        buf = buf.subarray(end + 4);
      }
      while (buf.length >= 2 && buf.length >= 2 + (buf[1]! & 0x7f)) {
        if ((buf[0]! & 0x0f) === 0x9) pings++;
        buf = buf.subarray(2 + (buf[1]! & 0x7f));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ pings, closedByServer: true }));
  });
}

test.serial('idle timeout: a client that ignores pings is dropped; a client that answers them stays', async (t) => {
  const s = await startSessionServer({ SessionService: { idle_timeout_in_sec: 8 } });
  try {
    const live = await s.connect('json');
    const silent = await silentClient(s.wsPort);
    t.true(silent.closedByServer);
    t.true(silent.pings >= 1, 'the server pinged before dropping the client');
    t.true(live.open);
    t.is(await live.request('echo', 'still here'), 'still here');
    await live.close();
  } finally {
    await s.stop();
  }
});
