import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import WebSocket from 'ws';
import { native } from '../../src/native.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { fixtures, waitFor, writePlugin } from './_server.ts';
import { startSessionServer } from './_session.ts';

/**
 * A group member that closed is no longer a member: publishes after its close are not sent to
 * it and not counted as drops, with one I/O thread and with two, where the main thread keeps
 * the groups and hears of a close on an I/O thread a little later (docs/guides/sessions.md: the
 * dropped-send counters "behave as with one thread").
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-probe-io-'));
test.after.always(() => fs.rmSync(dir, { recursive: true, force: true }));
const pub = writePlugin(dir, 'pubmany', `
  api.sessions.onMessage('join', (b, msg) => { api.sessions.join(msg.sessionId, b.group); msg.reply(true); });
  api.sessions.onMessage('pubmany', (b, msg) => {
    const blob = 'x'.repeat(b.size);
    for (let i = 0; i < b.count; i++) api.sessions.publish(b.group, 'pub', { i, blob });
    msg.reply(b.count);
  });
  api.sessions.onMessage('kickpub', (b, msg) => {
    api.sessions.close(b.target, 'bye');
    api.sessions.publish(b.group, 'pub', 1);
    msg.reply(true);
  });
`);

// The member that passed the limit left the group, so the event's later publishes are no drops.
for (const threads of [1, 2]) {
  test.serial(`[${threads}] publishes in one event to a member that stops reading: one backpressure drop, no no_session drops`, async (t) => {
    const s = await startSessionServer({ SessionService: { io_threads_size: threads, max_backpressure_bytes: 256 * 1024 } }, [pub, path.join(fixtures, 'plugins', 'session-probe')]);
    try {
      const publisher = await s.connect('json');
      const slow = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
      await new Promise((resolve) => slow.once('open', resolve));
      const closed = new Promise<number>((resolve) => slow.once('close', (code) => resolve(code)));
      await new Promise<void>((resolve) => { slow.once('message', () => resolve()); slow.send(JSON.stringify({ type: 'join', body: { group: 'room' } })); });
      (slow as unknown as { _socket: { pause(): void } })._socket.pause();
      const bp = native.counterReadInt('engine', 'dropped_sends_backpressure') ?? 0;
      const ns = native.counterReadInt('engine', 'dropped_sends_no_session') ?? 0;
      t.is(await publisher.request('pubmany', { group: 'room', count: 400, size: 30000 }), 400);
      await waitFor(() => activeSessions!.listener.stats.backpressureCloses >= 1, 10000, 'the backpressure close');
      (slow as unknown as { _socket: { resume(): void } })._socket.resume();
      t.is(await closed, 4008);
      await waitFor(() => activeSessions!.listener.groupSize('room') === 0, 5000, 'left');
      const got = { bp: (native.counterReadInt('engine', 'dropped_sends_backpressure') ?? 0) - bp, ns: (native.counterReadInt('engine', 'dropped_sends_no_session') ?? 0) - ns };
      t.deepEqual(got, { bp: 1, ns: 0 });
      await publisher.close();
    } finally {
      await s.stop();
    }
  });
}

// The member the event closed left its groups with its close: the publish after it is no drop.
for (const threads of [1, 2]) test.serial(`[${threads}] an event closes a group member then publishes to the group: no no_session drop`, async (t) => {
  const s = await startSessionServer({ SessionService: { io_threads_size: threads } }, [pub, path.join(fixtures, 'plugins', 'session-probe')]);
  try {
    const a = await s.connect('json');
    const b = await s.connect('msgpack');
    await b.request('join', { group: 'room' });
    const idB = (await b.request<{ sessionId: number }>('whoami')).sessionId;
    await a.request('join', { group: 'room' });
    const ns = native.counterReadInt('engine', 'dropped_sends_no_session') ?? 0;
    const got = a.next('pub');
    t.true(await a.request('kickpub', { target: idB, group: 'room' }));
    t.is((await got).body, 1);
    t.is((await b.closed).code, 4010);
    await waitFor(() => activeSessions!.listener.groupSize('room') === 1, 5000, 'left');
    await a.request('echo', 1);
    t.is((native.counterReadInt('engine', 'dropped_sends_no_session') ?? 0) - ns, 0);
    await a.close();
  } finally {
    await s.stop();
  }
});
