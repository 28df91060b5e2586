import test from 'ava';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor } from './_server.ts';

test.serial('stop drains queued events and the events they create, then refuses new ones', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  const before = native.counterReadInt('probe', 'notes') ?? 0;
  for (let i = 0; i < 100; i++) {
    s.server.invoke('probe.note', { file: '', label: '', spinMs: 2, spawn: [{ payload: { file: '', label: '' } }] });
  }
  await s.stop();
  t.is(native.counterReadInt('probe', 'notes'), before + 200);
  t.throws(() => s.server.invoke('probe.note', {}), {
    code: 'GSF_ERR_SHUTTING_DOWN', message: "the server is shutting down; invoke('probe.note') refused",
  } as never);
});

test.serial('the drain is bounded by shutdown_drain_timeout_in_ms', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 200 } });
  const tag = 123456789012;
  for (let i = 0; i < 50; i++) s.server.invoke('probe.note', { file: '', label: '', spinMs: 50 }, { tag });
  const started = Date.now();
  await s.stop();
  t.true(Date.now() - started < 3000);
  t.true(s.logs().some((l) => /stopping with \d+ queued and \d+ running event\(s\) after 200 ms/.test(l)));
});

test.serial('outstanding events: the count always, running events by name when profiled', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    // Long enough for the polls below to catch it running on a loaded machine.
    s.server.invoke('probe.note', { file: s.notes, label: 'long', sleepSyncMs: 3000 }, { name: 'long_one', tag: 2222222222 });
    const o = await waitFor(() => {
      const x = s.server.outstandingEvents();
      return x.running.length === 1 ? x : null;
    }, 5000, 'running event');
    t.is(o.count, 1);
    t.is(o.running[0]!.event_name, 'long_one');
    t.is(o.running[0]!.event_tag, 2222222222);
    t.true(o.running[0]!.elapsed_time_in_sec >= 0);
    await waitFor(() => s.records().length === 1);
    await waitFor(() => s.server.outstandingEvents().count === 0);
  } finally {
    await s.stop();
  }
  const off = await startTestServer({ EventDispatcher: { enable_outstanding_event_profiler: false } });
  try {
    // As above; the stop below waits for it to finish.
    off.server.invoke('probe.note', { file: off.notes, label: 'long', sleepSyncMs: 3000 });
    const o = await waitFor(() => (off.server.outstandingEvents().count === 1 ? off.server.outstandingEvents() : null), 5000);
    t.deepEqual(o.running, []);
  } finally {
    await off.stop();
  }
});
