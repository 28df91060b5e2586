/**
 * ABI 1.2 in a real server: a native plugin's on_start, on_stop (with its deadline) and timeout
 * handler, and every piece of user data it hands gsf (object continuations, timer_start timers)
 * released exactly once through its destructor: after its continuation ran or failed, when its
 * handler failed first, when its event timed out, after a timer ran or failed or was cancelled,
 * and at shutdown for what was still held. The fixture counts what it made and what gsf dropped.
 */
import test from 'ava';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';

const PROBE = path.join(fixtures, 'native-plugins', 'native-lifecycle');
const value = (name: string): number => native.counterValue('lifecycle', name) ?? 0;

let s: TestServer;

test.before(async () => {
  s = await startTestServer({ EventDispatcher: { event_threads_size: 2, event_timeout_in_ms: 400, shutdown_drain_timeout_in_ms: 5000 } },
    ['objects-probe', PROBE]);
});

test.after.always(async () => {
  await s?.stop();
});

test.serial('on_start ran once the server served, with its log line', async (t) => {
  t.is(value('started'), 1);
  t.true(s.logs().some((l) => l.includes('native-lifecycle: on_start ran')));
  t.is(value('made'), 1, 'the timeout handler\'s user data, made at init');
});

test.serial('a continuation that runs, or fails, releases its user data once', async (t) => {
  const before = value('dropped');
  s.server.invoke('lifecycle.fetch', 'ok');
  await waitFor(() => value('dropped') === before + 1, 10000, 'the drop after a continuation ran');
  s.server.invoke('lifecycle.fetch', 'fail');
  await waitFor(() => value('dropped') === before + 2, 10000, 'the drop after a continuation failed');
  t.is(value('continued'), 2);
  const line = await waitFor(() => s.logs().find((l) => l.includes("event 'lifecycle.fetch' failed")));
  t.true(line.includes("plugin 'native-lifecycle' event 'lifecycle.fetch' failed: INVALID_ARGUMENT: the probe's continuation fails on purpose"), line);
  t.false(line.includes("plugin 'gsf'"), line);
});

test.serial('a handler that fails after asking for an object: the continuation never runs and its user data is released', async (t) => {
  const before = value('dropped'), continued = value('continued');
  s.server.invoke('lifecycle.fetch', 'handler-fails');
  await waitFor(() => value('dropped') === before + 1, 10000, 'the drop of a continuation that never ran');
  t.is(value('continued'), continued);
  t.truthy(await waitFor(() => s.logs().find((l) => l.includes("failed: INVALID_ARGUMENT: the probe's handler fails on purpose"))));
});

test.serial('an event that times out with a continuation pending: the timeout handler runs and the user data is released', async (t) => {
  const before = value('dropped'), continued = value('continued');
  const id = s.server.invoke('lifecycle.fetch', 'stall');
  await waitFor(() => value('timeouts') >= 1, 10000, 'the timeout handler');
  t.is(value('timeout_event_id'), id);
  t.is(value('timeout_names'), 1, 'the handler got the event\'s name');
  await waitFor(() => value('dropped') === before + 1, 10000, 'the drop of the timed-out continuation');
  t.is(value('continued'), continued);
  t.truthy(s.logs().find((l) => l.includes(`Event timeout: event_name=lifecycle.fetch, event_id=${id}`)));
});

test.serial('timer_start timers: a run, a failure and a cancel each release their user data once', async (t) => {
  const before = value('dropped'), made = value('made');
  s.server.invoke('lifecycle.timers');
  await waitFor(() => value('made') === made + 4, 10000, 'four timers');
  // The one-shot, the failing one-shot and the self-cancelling repeater; the fourth stays.
  await waitFor(() => value('dropped') === before + 3, 10000, 'three drops');
  t.is(value('timer_runs'), 2);
  t.is(value('cancelling_runs'), 2);
  t.truthy(await waitFor(() => s.logs().find((l) => l.includes("plugin 'native-lifecycle' timer 'timer.native-lifecycle' failed: INVALID_ARGUMENT: the probe's timer fails on purpose"))));
});

test.serial('at shutdown on_stop runs with its deadline and gsf ends the timer still running, releasing its user data', async (t) => {
  const dropped = value('dropped');
  await s.stop();
  t.is(value('stopped'), 1);
  t.is(value('stop_deadline_ok'), 1);
  t.true(s.logs().some((l) => l.includes('native-lifecycle: on_stop ran')));
  t.is(value('dropped'), dropped + 1, 'the timer left running');
  // Everything made was released but the timeout handler's user data (kept while the copy is loaded).
  t.is(value('made'), value('dropped') + 1);
  t.is(value('unloaded'), 0, 'on_unload is for a reload retiring the copy');
});
