import test from 'ava';
import net from 'node:net';
import { startSessionServer } from './_session.ts';

interface SilentEnd {
  pings: number;
  /** The server ended the connection (a FIN, a reset or a close frame), not our own deadline. */
  closedByServer: boolean;
  how: 'fin' | 'reset' | 'close frame' | 'deadline';
  afterMs: number;
}

/**
 * A raw WebSocket client that never answers pings. Resolves when the server drops it, or after
 * `deadlineMs` with `closedByServer: false` (it then closes the socket itself).
 */
function silentClient(port: number, deadlineMs: number): Promise<SilentEnd> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const start = Date.now();
    let upgraded = false;
    let pings = 0;
    let buf = Buffer.alloc(0);
    let settled = false;
    const finish = (how: SilentEnd['how']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      socket.destroy();
      resolve({ pings, closedByServer: how !== 'deadline', how, afterMs: Date.now() - start });
    };
    const deadline = setTimeout(() => finish('deadline'), deadlineMs);
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
      // Server frames are unmasked; the ones expected here (ping, close) have short payloads.
      while (buf.length >= 2 && buf.length >= 2 + (buf[1]! & 0x7f)) {
        const opcode = buf[0]! & 0x0f;
        if (opcode === 0x9) pings++;
        if (opcode === 0x8) finish('close frame');
        buf = buf.subarray(2 + (buf[1]! & 0x7f));
      }
    });
    socket.on('end', () => finish('fin'));
    socket.on('error', () => finish('reset'));
    socket.on('close', () => finish('reset'));
  });
}

test.serial('idle timeout: a client that ignores pings is dropped; a client that answers them stays', async (t) => {
  const s = await startSessionServer({ SessionService: { idle_timeout_in_sec: 8 } });
  try {
    const live = await s.connect('json');
    // uWebSockets.js counts the 8 s idle timeout in ticks of 4 s, the first of which may come
    // right after the connection opens: the drop comes 4 to 8 s after it (30 s is ample).
    const silent = await silentClient(s.wsPort, 30_000);
    t.true(silent.closedByServer, `the server did not drop the silent client (ended by: ${silent.how})`);
    t.true(silent.afterMs >= 3900, `dropped after ${silent.afterMs} ms, before one 4 s tick of the idle timeout`);
    t.true(silent.pings >= 1, 'the server pinged before dropping the client');
    t.true(live.open);
    t.is(await live.request('echo', 'still here'), 'still here');
    await live.close();
  } finally {
    await s.stop();
  }
});
