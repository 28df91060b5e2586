/**
 * A session that closes while its native message handler is stuck past the event timeout, with
 * two I/O threads: the closed event queued behind the stuck event is cancelled with the tag's
 * queued events, and queued again, so the session-closed hooks run once, as they do when the
 * client closes after the timeout (or with close_session_when_event_timeout). They never ran.
 * A client that stays gets an `_error` frame for the stuck request and for the one behind it.
 */
import path from 'node:path';
import test from 'ava';
import WebSocket from 'ws';
import { native } from '../../src/native.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const slow = path.join(fixtures, 'native-plugins', 'probe-nat-slow');

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({
    EventDispatcher: { event_threads_size: 2, event_timeout_in_ms: 300 },
    SessionService: { io_threads_size: 2 },
  }, ['session-probe', slow]);
});
test.after.always(async () => {
  await s?.stop();
});

const cv = (n: string): number => native.counterValue('probe_nat', n) ?? 0;

test.serial('closed while a native handler is stuck past its timeout: the closed hook still runs once', async (t) => {
  const closed0 = cv('closed'), woke0 = cv('woke');
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
  ws.on('error', () => undefined);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  await waitFor(() => cv('opened') >= 1, 5000, 'opened hook');
  ws.send(JSON.stringify({ type: 'pns.sleep', id: 1, body: { ms: 900, sends: 0 } }));
  // The client goes while the handler still sleeps (before the 300 ms timeout).
  ws.close();
  await waitFor(() => activeSessions!.listener.size === 0, 5000, 'session gone');
  await waitFor(() => s.logs().some((l) => l.includes('Event timeout: event_name=pns.sleep')), 5000, 'timeout line');
  await waitFor(() => cv('woke') === woke0 + 1, 5000, 'the handler returned');
  t.true(s.logs().some((l) => l.includes('cancelled 1 queued event(s) of timed-out tag')), 'the closed event was cancelled with the tag');
  await waitFor(() => cv('closed') > closed0, 5000, 'the closed hook');
  t.is(cv('closed'), closed0 + 1, 'the session-closed hook ran once');
  t.is(native.counterReadInt('engine', 'sessions'), 0);
});

test.serial('a native handler stuck past its timeout: its request gets an _error frame with its id, and the session goes on', async (t) => {
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
  ws.on('error', () => undefined);
  const frames: unknown[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  ws.send(JSON.stringify({ type: 'pns.sleep', id: 7, body: { ms: 900, sends: 0 } }));
  ws.send(JSON.stringify({ type: 'echo', id: 8, body: 'behind' }));
  await waitFor(() => frames.length >= 2, 5000, 'two answers');
  t.deepEqual(frames, [
    { type: '_error', id: 7, body: { code: 'GSF_ERR_MESSAGE_TIMEOUT', message: "the handler of 'pns.sleep' did not finish within the event timeout", type: 'pns.sleep' } },
    { type: '_error', id: 8, body: { code: 'GSF_ERR_MESSAGE_DROPPED', message: "message 'echo' was dropped unanswered: an earlier message of this session timed out", type: 'echo' } },
  ]);
  ws.send(JSON.stringify({ type: 'echo', id: 9, body: 'after' }));
  await waitFor(() => frames.length >= 3, 5000, 'the reply after');
  t.deepEqual(frames[2], { type: 'echo', id: 9, body: 'after' });
  ws.close();
});
