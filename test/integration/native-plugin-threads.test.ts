/**
 * Native plugins with threads of their own that keep call handles and writers past their hooks
 * (test/fixtures/native-plugins/probe-nthreads): an ended call is expired, a plugin thread's
 * invoke after the stop is refused, a stuck handler's own thread keeps invoking, a writer's
 * second answer is CONFLICT and one after 504 EXPIRED, and an answer that went with a
 * timed-out call ends the request with its event. The fixture reports through counters of
 * category "nthreads" and waits for the test's go_* counters.
 */
import test from 'ava';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { apiUrl } from './_session.ts';

const PROBE = path.join(fixtures, 'native-plugins', 'probe-nthreads');
const value = (name: string): number => native.counterValue('nthreads', name) ?? 0;
const reset = (...names: string[]): void => {
  for (const n of names) native.counterUpdate('nthreads', n, 0, false);
};
const OK = 0, CONFLICT = 3, UNAVAILABLE = 4, EXPIRED = 10;

test.serial('a call kept past its handler and used from another thread is refused with EXPIRED, and its log line is written at once', async (t) => {
  reset('effect_runs', 'saved', 'saved_done', 'saved_invoke', 'saved_reply', 'saved_send', 'saved_timer');
  const s = await startTestServer({}, [PROBE]);
  try {
    s.server.invoke('nt.save');
    await waitFor(() => value('saved') === 1, 10000, 'the call saved');
    s.server.invoke('nt.use_saved');
    await waitFor(() => value('saved_done') === 1, 10000, 'the thread to use the saved call');
    t.deepEqual(
      [value('saved_invoke'), value('saved_reply'), value('saved_send'), value('saved_timer')],
      [EXPIRED, EXPIRED, EXPIRED, EXPIRED],
    );
    t.is(value('effect_runs'), 0);
    // gsf_plugin.h, log: "with gsf_no_call(), or a call that has ended, it is written at once,
    // prefixed "native"" (the shared host table cannot tell which plugin wrote it).
    await waitFor(() => s.logs().some((l) => l.includes('nthreads-nocall-line')), 10000, 'the no-call line');
    const lines = s.logs().filter((l) => l.includes('nthreads-saved-call-line') || l.includes('nthreads-nocall-line'));
    t.deepEqual(lines.map((l) => l.replace(/^\S+ \S+ /, '')), ['native] native: nthreads-saved-call-line', 'native] native: nthreads-nocall-line']);
  } finally {
    await s.stop();
  }
});

test.serial("a plugin thread's invoke after the server stopped is refused with UNAVAILABLE and leaves nothing queued", async (t) => {
  reset('effect_runs', 'armed', 'go_after_stop', 'after_stop_invoke', 'after_stop_timer', 'after_stop_done');
  const s = await startTestServer({}, [PROBE]);
  try {
    s.server.invoke('nt.arm');
    await waitFor(() => value('armed') === 1, 10000, 'the thread armed');
  } finally {
    await s.stop();
  }
  native.counterUpdate('nthreads', 'go_after_stop', 1, false);
  await waitFor(() => value('after_stop_done') === 1, 10000, 'the thread to invoke');
  const waiting = native.queueStats().waiting;
  native.queueReset(); // whatever it queued must not reach the next server of this worker
  // UNAVAILABLE: "not possible now (no running event, shutting down)"; a managed invoke gets GSF_ERR_SHUTTING_DOWN.
  t.deepEqual([value('after_stop_invoke'), value('after_stop_timer'), waiting], [UNAVAILABLE, UNAVAILABLE, 0]);
});

test.serial("a handler stuck past event_timeout_in_ms: its own held invokes are dropped, its thread's no-call invokes all run", async (t) => {
  reset('effect_runs', 'block_thread_ok', 'block_thread_done', 'block_handler_ok', 'block_handler_last', 'block_handler_done');
  const s = await startTestServer({ EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 2 } }, [PROBE]);
  try {
    s.server.invoke('nt.block');
    await waitFor(() => value('block_handler_done') === 1 && value('block_thread_done') === 1, 10000, 'the handler to time out');
    t.is(value('block_handler_last'), EXPIRED);
    t.is(value('block_thread_ok'), 20);
    await waitFor(() => value('effect_runs') >= 20, 10000, "the thread's invokes to run");
    // The handler's own invokes were held with its event and dropped at the timeout.
    t.is(value('effect_runs'), 20);
    await waitFor(() => s.logs().some((l) => l.includes('Event timeout: event_name=nt.block')), 10000, 'the timeout line');
  } finally {
    await s.stop();
  }
});

test.serial('a writer answered after its request got 504 is refused with EXPIRED', async (t) => {
  reset('go_late', 'go_late2', 'late_answer', 'late_first_done', 'late_again', 'late_done');
  const s = await startTestServer({ ApiService: { api_service_handler_timeout_in_ms: 200 } }, [PROBE]);
  try {
    const r = await fetch(`${apiUrl(s)}/nt/late`);
    t.is(r.status, 504);
    native.counterUpdate('nthreads', 'go_late', 1, false);
    native.counterUpdate('nthreads', 'go_late2', 1, false);
    await waitFor(() => value('late_done') === 1, 10000, 'the late answer');
    t.deepEqual([value('late_answer'), value('late_again')], [EXPIRED, EXPIRED]);
  } finally {
    await s.stop();
  }
});

test.serial('a second answer from a thread, after the first one reached the client, is refused with CONFLICT', async (t) => {
  reset('go_late', 'go_late2', 'late_answer', 'late_first_done', 'late_again', 'late_done');
  const s = await startTestServer({}, [PROBE]);
  try {
    const pending = fetch(`${apiUrl(s)}/nt/late`);
    native.counterUpdate('nthreads', 'go_late', 1, false);
    const r = await pending;
    t.deepEqual([r.status, await r.text()], [200, '"too late"']);
    t.is(value('late_answer'), OK);
    // gsf_plugin.h, gsf_type_api_writer: "A second answer is refused (GSF_STATUS_CONFLICT) and logged;
    // an answer after the request's deadline (it got 504) is refused with GSF_STATUS_EXPIRED."
    native.counterUpdate('nthreads', 'go_late2', 1, false);
    await waitFor(() => value('late_done') === 1, 10000, 'the second answer');
    t.is(value('late_again'), CONFLICT);
  } finally {
    await s.stop();
  }
});

test.serial('a route whose handler answered and then stalled past event_timeout_in_ms: the request ends with its event (504), not at the handler deadline', async (t) => {
  reset('stall_answer', 'stall_done', 'effect_runs');
  const s = await startTestServer({ EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 2 }, ApiService: { api_service_handler_timeout_in_ms: 30000 } }, [PROBE]);
  try {
    const r = await fetch(`${apiUrl(s)}/nt/answer-then-stall`);
    t.is(value('stall_answer'), OK);
    // The answer went with the timed-out call's effects, which are dropped: the request ends with
    // its event (504 GSF_ERR_HANDLER_EVENT_ENDED), as a managed handler's does, not at the
    // handler deadline, since no one can answer it any more.
    t.deepEqual([r.status, await r.text()],
      [504, '{"error":"GSF_ERR_HANDLER_EVENT_ENDED","message":"GET /nt/answer-then-stall: the handler\'s event timed out before it answered"}']);
    await waitFor(() => value('stall_done') === 1, 10000, 'the stall to end');
    t.is(value('effect_runs'), 0);
  } finally {
    await s.stop();
  }
});
