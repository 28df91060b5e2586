import test from 'ava';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor } from './_server.ts';

test.serial('profiler figures agree with known handler and io-wait times', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    native.profilerReset();
    const tag = 31313131313;
    for (let i = 0; i < 5; i++) s.server.invoke('probe.note', { file: s.notes, label: `p${i}`, spinMs: 40, ioMs: 60 }, { tag, name: 'prof' });
    await waitFor(() => s.records().length === 5, 10000);
    // The profile is recorded once each event completes, just after its handler wrote the note.
    const p = await waitFor(() => {
      const e = native.profilerEvent('prof');
      return e?.all_time.execution_count === 5 ? e : null;
    }, 10000, 'the five profiles');
    const a = p.all_time;
    t.is(a.execution_count, 5);
    t.is(p.last1min.execution_count, 5);
    // The spin takes at least its 40 ms. The await is counted from the park, a moment after the
    // 60 ms timer was set, and Node fires a timer up to 1 ms early (whole-ms clock); a pause
    // between the two (the thread descheduled on a loaded machine, a garbage collection) makes
    // it shorter still, so its lower bound leaves room. Upper bounds allow a loaded machine.
    t.true(a.handler_time_mean_in_sec >= 0.039 && a.handler_time_mean_in_sec < 0.2, `handler ${a.handler_time_mean_in_sec}`);
    t.true(a.io_wait_time_mean_in_sec >= 0.05 && a.io_wait_time_mean_in_sec < 0.25, `io ${a.io_wait_time_mean_in_sec}`);
    // Same-tag events wait for each other: the last waited about four runs (~400 ms).
    t.true(a.queue_time_max_in_sec >= 0.35, `queue max ${a.queue_time_max_in_sec}`);
    const sum = a.queue_time_mean_in_sec + a.handler_time_mean_in_sec + a.io_wait_time_mean_in_sec;
    t.true(Math.abs(a.execution_time_mean_in_sec - sum) < 1e-6, 'execution = queue + handler + io');
    t.true(a.handler_time_max_in_sec >= a.handler_time_mean_in_sec);
    t.is(a.timeout_count, 0);
    t.is(p.last1min.timeout_count, undefined);
    t.is(a.rollback_count_max, 0);
    const summary = native.profilerSummary();
    t.true(summary.all_time.count >= 5);
    const order = native.profilerAll(1).map(([name]) => name);
    t.is(order[0], 'prof');
  } finally {
    await s.stop();
  }
});

test.serial('enable_event_profiler=false records nothing; turning it on live resumes', async (t) => {
  const s = await startTestServer({ EventDispatcher: { enable_event_profiler: false } });
  try {
    native.profilerReset();
    s.server.invoke('probe.note', { file: s.notes, label: 'off' }, { name: 'unprofiled' });
    await waitFor(() => s.records().length === 1);
    await waitFor(() => native.queueStats().outstanding === 0, 5000, 'the event to complete');
    t.is(native.profilerEvent('unprofiled'), null);
    t.deepEqual(s.server.thread.flags.setFromText('enable_event_profiler', '1'), { ok: true, value: true });
    s.server.invoke('probe.note', { file: s.notes, label: 'on' }, { name: 'profiled' });
    // The sample is recorded when the event completes, just after its handler wrote the note.
    await waitFor(() => native.profilerEvent('profiled'), 5000, 'the profile');
    t.is(native.profilerEvent('profiled')?.all_time.execution_count, 1);
  } finally {
    await s.stop();
  }
});
