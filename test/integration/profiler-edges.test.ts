/**
 * The event profiler and the outstanding-events report at their edges: several events of one
 * event thread awaiting or running at once, event names ending in '/', and a reset while
 * profiling is off.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';

const BASE = '/v1/counters/engine/event/profiling';
const AWAIT = path.join(fixtures, 'plugins', 'await-probe');

type Values = Record<string, number | string>;

// docs/guides/plugins.md: "The outstanding-events report (`event/profiling/outstanding`) lists
// awaiting events with `awaiting: true`"; docs/reference/metrics.md: `running` and, per event
// running, its `event_name`, `event_id`, `event_tag`, `elapsed_time_in_sec`.
test.serial('outstanding report: two events awaiting on one event thread are both listed, marked awaiting', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, ['probe', AWAIT]);
  try {
    const api = client(s.server.api.port);
    const file = path.join(s.dir, 'a.jsonl');
    s.server.invoke('await.mark', { file, label: 'a1', awaitMs: 3000 }, { name: 'aw1', tag: 1001 });
    s.server.invoke('await.mark', { file, label: 'a2', awaitMs: 3000 }, { name: 'aw2', tag: 1002 });
    // Each is listed from its start; it is marked awaiting once its handler has reached its await.
    const values = await waitFor(async () => {
      const v = ((await api.get('/v1/counters/event/profiling/outstanding/?values=true')).body as { values: Values }).values;
      return v.count === 2 && v.running === 2 && v['running/0/awaiting'] === 1 && v['running/1/awaiting'] === 1 ? v : null;
    }, 5000, 'two awaiting events');
    const names = Object.entries(values).filter(([k]) => k.endsWith('/event_name')).map(([, v]) => v).sort();
    t.deepEqual(names, ['aw1', 'aw2'], JSON.stringify(values));
    const awaiting = Object.entries(values).filter(([k]) => k.endsWith('/awaiting')).map(([, v]) => v);
    t.deepEqual(awaiting, [1, 1], JSON.stringify(values));
    t.deepEqual([values['running/0/event_thread_index'], values['running/1/event_thread_index']], [0, 0]);
  } finally {
    await s.stop();
  }
});

// Same collision with one running (synchronous) event and one awaiting event on the one thread.
test.serial('outstanding report: a running event and an awaiting event on one thread are both listed', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, ['probe', AWAIT]);
  try {
    const api = client(s.server.api.port);
    const file = path.join(s.dir, 'a.jsonl');
    s.server.invoke('await.mark', { file, label: 'a1', awaitMs: 4000 }, { name: 'aw1', tag: 1001 });
    await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('awaiting'), 5000, 'aw1 to await');
    s.server.invoke('probe.note', { file: '', label: '', sleepSyncMs: 2000 }, { name: 'busy', tag: 1003 });
    let last: Values = {};
    const values = await waitFor(async () => {
      last = ((await api.get('/v1/counters/event/profiling/outstanding/?values=true')).body as { values: Values }).values;
      return last.running === 2 ? last : null;
    }, 5000, 'a running and an awaiting event').catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(last)}`); });
    const names = Object.entries(values).filter(([k]) => k.endsWith('/event_name')).map(([, v]) => v).sort();
    t.deepEqual(names, ['aw1', 'busy'], JSON.stringify(values));
  } finally {
    await s.stop();
  }
});

// SPEC 6.3 lets any name be set; docs/reference/rest.md: path parameters reach handlers
// percent-decoded (`a%2Fb` is `a/b`): an event named `trail/` is read back with `trail%2F`.
test.serial('an event whose name ends in "/" is answered by each/{name} and by the counters path', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, ['probe']);
  try {
    const api = client(s.server.api.port);
    await api.post(`${BASE}/reset`);
    const name = 'trail/';
    s.server.invoke('probe.note', { file: '', label: '' }, { name });
    await waitFor(() => native.profilerEvent(name)?.all_time.execution_count === 1, 5000, 'the profile');
    const each = await api.get(`${BASE}/each/${encodeURIComponent(name)}`);
    t.deepEqual({ status: each.status, keys: Object.keys(each.body as object), count: (each.body as Record<string, { all_time: { execution_count: number } }>)[name]?.all_time.execution_count },
      { status: 200, keys: [name], count: 1 }, each.text.slice(0, 200));
    const counter = await api.get(`/v1/counters/event/profiling/all/${encodeURIComponent(name)}/all_time/execution_count/`);
    t.deepEqual({ status: counter.status, body: counter.body },
      { status: 200, body: { category: 'event/profiling/all', counter: 'trail//all_time/execution_count', value: 1 } });
  } finally {
    await s.stop();
  }
});

// docs/reference/metrics.md, "Event profiling (SPEC 4.5)": "Only while `enable_event_profiler`
// is true; otherwise 409 GSF_ERR_PROFILER_DISABLED", over a block that lists POST .../reset;
// SPEC 4.5: "Available only when `enable_event_profiler` is true".
test.serial('POST reset while the profiler is off answers 409 and keeps the figures', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, ['probe']);
  try {
    const api = client(s.server.api.port);
    await api.post(`${BASE}/reset`);
    s.server.invoke('probe.note', { file: '', label: '' }, { name: 'kept' });
    await waitFor(() => native.profilerEvent('kept')?.all_time.execution_count === 1, 5000, 'the profile');
    t.is((await api.put('/v1/configurations/enable_event_profiler/false')).status, 200);
    const r = await api.post(`${BASE}/reset`);
    t.deepEqual({ status: r.status, body: r.body }, { status: 409, body: { error: 'GSF_ERR_PROFILER_DISABLED',
      message: 'event profiling is off; turn it on with PUT /v1/configurations/enable_event_profiler/true' } });
    t.is((await api.put('/v1/configurations/enable_event_profiler/true')).status, 200);
    t.is(native.profilerEvent('kept')?.all_time.execution_count, 1);
  } finally {
    await s.stop();
  }
});
