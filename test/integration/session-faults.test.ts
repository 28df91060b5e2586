import test from 'ava';
import WebSocket from 'ws';
import { native } from '../../src/native.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { CloseCode } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { startSessionServer } from './_session.ts';

test.serial('when a worker is ended for a timeout, replies its other events already made are still delivered', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 500 } });
  try {
    const c = await s.connect('json');
    const z = await s.connect('msgpack');
    // Warm up: trivial events make the worker claim many at once.
    await Promise.all(Array.from({ length: 300 }, (_, i) => z.request('echo', i)));
    for (let round = 0; round < 3; round++) {
      // One tick: the echo, then a handler that never returns on the same session (the same
      // claim, in that order), and hundreds of batch-mates from another session.
      const echo = c.request('echo', `before-${round}`);
      c.send('slow', { ms: 60000 });
      const others = Promise.all(Array.from({ length: 300 }, (_, i) => z.request('echo', i)));
      t.is(await echo, `before-${round}`);
      t.is((await others).length, 300);
      await waitFor(() => s.server.watchdog.timeouts === round + 1, 10000, 'the timeout');
      t.is(await c.request('echo', `after-${round}`), `after-${round}`, 'the session keeps working on the new worker');
    }
    await Promise.all([c.close(), z.close()]);
  } finally {
    await s.stop();
  }
});

test.serial('a group member that stops reading is closed with 4008 by publishes, with a log line and a counter', async (t) => {
  const s = await startSessionServer({ SessionService: { max_backpressure_bytes: 256 * 1024 } });
  try {
    const publisher = await s.connect('json');
    const reader = await s.connect('json');
    const slow = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
    await new Promise((resolve) => slow.once('open', resolve));
    const closed = new Promise<number>((resolve) => slow.once('close', (code) => resolve(code)));
    let frames = 0;
    slow.on('message', () => { frames++; });
    const join = (ws: WebSocket) => new Promise<void>((resolve) => {
      ws.once('message', () => resolve());
      ws.send(JSON.stringify({ type: 'group', body: { group: 'room', join: true } }));
    });
    await join(slow);
    // The slow member stops reading; the publisher sends 1,000 × 60 KiB to the room (more than
    // the kernel's socket buffers hold).
    (slow as unknown as { _socket: { pause(): void } })._socket.pause();
    const before = native.counterReadInt('engine', 'dropped_sends_backpressure') ?? 0;
    const blob = 'x'.repeat(60 * 1024); // under max_message_bytes (64 KiB) with its envelope
    for (let i = 0; i < 1000; i++) publisher.send('publish', { group: 'room', body: blob });
    t.true(await publisher.request('publish', { group: 'room', body: 'last' }));
    await waitFor(() => activeSessions!.listener.stats.backpressureCloses >= 1, 10000, 'the backpressure close');
    (slow as unknown as { _socket: { resume(): void } })._socket.resume();
    t.is(await closed, CloseCode.backpressure);
    t.true(frames < 1001, `the slow member got ${frames} frames before its close`);
    t.true(s.logs().some((l) => /session \d+ closed \(4008\): send buffer of \d+ bytes passed max_backpressure_bytes/.test(l)));
    t.true((native.counterReadInt('engine', 'dropped_sends_backpressure') ?? 0) > before);
    t.is(activeSessions!.listener.groupSize('room'), 0, 'the closed member left the group');
    // The room goes on: a member that reads gets what is published next.
    t.true(await reader.request('group', { group: 'room', join: true }));
    const news = new Promise((resolve) => reader.on('group.news', resolve));
    t.true(await publisher.request('publish', { group: 'room', body: 'next' }));
    t.is(await news, 'next');
    await Promise.all([publisher.close(), reader.close()]);
  } finally {
    await s.stop();
  }
});

test.serial('a failing message handler is logged with its plugin, its message type and its own stack', async (t) => {
  const s = await startSessionServer();
  try {
    const c = await s.connect('json');
    const err = await t.throwsAsync(c.request('fail'));
    t.is(err.message, "the handler of 'fail' failed");
    const line = await waitFor(() => s.logs().find((l) => l.includes('this handler always fails')), 5000, 'failure line');
    t.true(line.includes("GSF_ERR_HANDLER_FAILED: plugin 'session-probe' message handler 'fail' failed: this handler always fails"), line);
    t.false(line.includes('_session.message'));
    const fields = JSON.parse(line.slice(line.indexOf(' {"') + 1)) as { event_name: string; stack: string };
    t.is(fields.event_name, 'fail');
    t.regex(fields.stack, /fixtures\/plugins\/session-probe\/index\.ts:\d+/);
    await c.close();
  } finally {
    await s.stop();
  }
});

test.serial('a frame in another key order is named by its type in the timeout line and the profile', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 1 } });
  try {
    const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
    await new Promise((resolve) => ws.once('open', resolve));
    const before = native.profilerEvent('slow')?.all_time.timeout_count ?? 0;
    ws.send('{"body":{"ms":5000},"type":"slow"}');
    const line = await waitFor(() => s.logs().find((l) => l.includes('Event timeout:')), 10000, 'timeout line');
    t.regex(line, /Event timeout: event_name=slow, event_id=\d+, event_tag=\d+/);
    t.is(native.profilerEvent('slow')?.all_time.timeout_count, before + 1);
    t.is(native.profilerEvent('_session.message'), null);
    ws.close();
  } finally {
    await s.stop();
  }
});
