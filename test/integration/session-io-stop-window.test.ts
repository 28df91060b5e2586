/**
 * A frame routed to a session while the session service stops (the outbound reader still
 * applies the workers' flushes while `shutdown` awaits the threads) is either written before
 * the session's 1001 or counted as dropped (`engine/dropped_sends_no_session`), as with one
 * listener thread. Run with GSF_TEST_IO_THREADS=1 and =2.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { encodeFrame } from '../../src/session/codec.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer | undefined;
test.afterEach.always(async () => {
  await s?.stop();
  s = undefined;
});

test.serial('a frame routed while the session service stops is written or counted as dropped', async (t) => {
  s = await startSessionServer();
  const c = await s.connect('json');
  const id = (await c.request<{ sessionId: number }>('whoami')).sessionId;
  const got: unknown[] = [];
  void c.next('late').then((m) => got.push(m.body), () => undefined);
  const dropped = (): number => native.counterReadInt('engine', 'dropped_sends_no_session') ?? 0;
  const before = dropped();
  const listener = activeSessions!.listener;
  const stopping = listener.shutdown();
  // The session's thread has closed it (it counts the close before it says it stopped); this
  // thread has not yet heard. Polled without yielding, so no note is read meanwhile.
  const deadline = Date.now() + 10_000;
  while (native.counterReadInt('engine', 'sessions') !== 0 && Date.now() < deadline) { /* poll */ }
  t.is(native.counterReadInt('engine', 'sessions'), 0);
  // A flush the reader applies during the stop: after the stop began, before it ended.
  const routed = listener.send(id, encodeFrame('json', 'late', { n: 1 }));
  await stopping;
  const info = await c.closed;
  // Frames come before the close frame: whatever was written has been read (and pushed) by now.
  t.is(info.code, 1001);
  // Every frame accepted is delivered or counted.
  t.is(got.length + (dropped() - before), 1);
  t.is(routed, got.length === 1); // true only for a frame that was written
});
