/** `enable_outstanding_event_profiler` decides what `event/profiling/outstanding` shows (SPEC 6.4). */
import test from 'ava';
import { startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';

type Values = Record<string, number | string>;

test.serial('switched on: the count, the running events and, per event, what it is and where it runs', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } });
  try {
    const api = client(s.server.api.port);
    // Long enough for the polls below to catch it running on a loaded machine.
    s.server.invoke('probe.note', { file: s.notes, label: 'long', sleepSyncMs: 3000 }, { name: 'long_one', tag: 2222222222 });
    const values = await waitFor(async () => {
      const v = ((await api.get('/v1/counters/event/profiling/outstanding/?values=true')).body as { values: Values }).values;
      return v.running === 1 ? v : null;
    }, 5000, 'a running event');
    t.is(values.count, 1);
    const names = Object.keys(values).sort();
    t.deepEqual(names, ['count', 'running', 'running/0/awaiting', 'running/0/elapsed_time_in_sec', 'running/0/event_id', 'running/0/event_name',
      'running/0/event_tag', 'running/0/event_thread_index']);
    t.is(values['running/0/awaiting'], 0);
    t.is(values['running/0/event_thread_index'], 0);
    t.is(values['running/0/event_name'], 'long_one');
    t.is(values['running/0/event_tag'], 2222222222);
    t.true((values['running/0/elapsed_time_in_sec'] as number) >= 0);
    t.deepEqual((await api.get('/v1/counters/event/profiling/outstanding/running/0/event_name/')).body,
      { category: 'event/profiling/outstanding', counter: 'running/0/event_name', value: 'long_one' });
    await waitFor(() => s.records().length === 1);
    await waitFor(async () => ((await api.get('/v1/counters/event/profiling/outstanding/count/')).body as { value: number }).value === 0);
    t.deepEqual(((await api.get('/v1/counters/event/profiling/outstanding/?values=true')).body as { values: Values }).values, { count: 0, running: 0 });
  } finally {
    await s.stop();
  }
});

test.serial('switched off: only the count; the running events are not there', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, enable_outstanding_event_profiler: false } });
  try {
    const api = client(s.server.api.port);
    // Long enough for the polls below to catch it running on a loaded machine.
    s.server.invoke('probe.note', { file: s.notes, label: 'long', sleepSyncMs: 3000 });
    const values = await waitFor(async () => {
      const v = ((await api.get('/v1/counters/event/profiling/outstanding/?values=true')).body as { values: Values }).values;
      return v.count === 1 ? v : null;
    }, 5000, 'an outstanding event');
    t.deepEqual(values, { count: 1 });
    const running = await api.get('/v1/counters/event/profiling/outstanding/running/');
    t.is(running.status, 404);
    t.deepEqual(running.body, { error: 'GSF_ERR_COUNTER_NOT_FOUND', message: "no counter 'running' in category 'event/profiling/outstanding'" });
    await waitFor(() => s.records().length === 1);
  } finally {
    await s.stop();
  }
});
