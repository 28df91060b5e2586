import test from 'ava';
import { startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';

const BASE = '/v1/counters/engine/event/profiling';
const SUMMARY_KEYS = ['count', 'execution_time_mean_in_sec', 'execution_time_stdev_in_sec', 'execution_time_max_in_sec',
  'io_wait_time_mean_in_sec', 'io_wait_time_stdev_in_sec', 'io_wait_time_max_in_sec', 'queue_time_mean_in_sec',
  'queue_time_stdev_in_sec', 'queue_time_max_in_sec'];
const EVENT_KEYS = ['execution_count', 'rollback_count_mean', 'rollback_count_max', 'execution_time_mean_in_sec',
  'execution_time_stdev_in_sec', 'execution_time_max_in_sec', 'handler_time_mean_in_sec', 'handler_time_stdev_in_sec',
  'handler_time_max_in_sec', 'io_wait_time_mean_in_sec', 'io_wait_time_stdev_in_sec', 'io_wait_time_max_in_sec',
  'queue_time_mean_in_sec', 'queue_time_stdev_in_sec', 'queue_time_max_in_sec', 'timeout_count', 'object_create_count_mean',
  'object_count_mean', 'object_cache_hit_rate_mean', 'object_nolock_rate_mean', 'object_lease_rate_mean', 'object_null_rate_mean'];

interface Entry { event_name: string; all_time: Record<string, number>; last1min: Record<string, number> }

test.serial('profiling REST: summary, each, all, the six orderings, reset, and 409 while off', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    const api = client(s.server.api.port);
    t.deepEqual((await api.post(`${BASE}/reset`)).body, { reset: true });
    // "heavy": 3 × 30 ms handler; "waiter": 2 × 40 ms io-wait, little handler time; "light": 20 × trivial.
    for (let i = 0; i < 3; i++) s.server.invoke('probe.note', { file: '', label: '', spinMs: 30 }, { name: 'heavy' });
    for (let i = 0; i < 2; i++) s.server.invoke('probe.note', { file: '', label: '', ioMs: 40 }, { name: 'waiter' });
    for (let i = 0; i < 20; i++) s.server.invoke('probe.note', { file: '', label: '' }, { name: 'light' });
    const summary = await waitFor(async () => {
      const r = await api.get(`${BASE}/summary/`);
      return (r.body as { all_time: { count: number } }).all_time.count === 25 ? r : null;
    });
    t.is(summary.status, 200);
    const sb = summary.body as Record<string, Record<string, number>>;
    t.deepEqual(Object.keys(sb), ['all_time', 'last1min']);
    t.deepEqual(Object.keys(sb.all_time!), SUMMARY_KEYS);
    t.is(sb.last1min!.count, 25);

    const each = await api.get(`${BASE}/each/heavy`);
    t.is(each.status, 200);
    const heavy = (each.body as Record<string, { all_time: Record<string, number>; last1min: Record<string, number> }>).heavy!;
    t.deepEqual(Object.keys(heavy.all_time), EVENT_KEYS);
    t.false('timeout_count' in heavy.last1min);
    t.is(heavy.all_time.execution_count, 3);
    t.true(heavy.all_time.handler_time_mean_in_sec! >= 0.029);

    const missing = await api.get(`${BASE}/each/ghost`);
    t.is(missing.status, 404);
    t.deepEqual(missing.body, { error: 'GSF_ERR_PROFILE_NOT_FOUND', message: "no profile for event 'ghost' (profiled events must be named and have run)" });

    const all = (await api.get(`${BASE}/all`)).body as Record<string, unknown>;
    t.deepEqual(Object.keys(all).sort(), ['heavy', 'light', 'waiter']);

    const names = async (path: string): Promise<string[]> => ((await api.get(`${BASE}/${path}`)).body as Entry[]).map((e) => e.event_name);
    t.is((await names('order_by_handler_time'))[0], 'heavy');
    t.is((await names('order_by_handler_time_sum'))[0], 'heavy');
    t.is((await names('order_by_io_wait_time'))[0], 'waiter');
    t.is((await names('order_by_io_wait_time_sum'))[0], 'waiter');
    for (const path of ['order_by_execution_time', 'order_by_execution_time_sum']) {
      const list = ((await api.get(`${BASE}/${path}`)).body as Entry[]);
      const key = (e: Entry) => (path.endsWith('_sum') ? e.all_time.execution_time_mean_in_sec! * e.all_time.execution_count! : e.all_time.execution_time_mean_in_sec!);
      for (let i = 1; i < list.length; i++) t.true(key(list[i - 1]!) >= key(list[i]!), `${path} sorted`);
      t.is(list.length, 3);
    }

    t.deepEqual((await api.post(`${BASE}/reset`)).body, { reset: true });
    t.is(((await api.get(`${BASE}/summary`)).body as { all_time: { count: number } }).all_time.count, 0);

    t.is((await api.put('/v1/configurations/enable_event_profiler/false')).status, 200);
    for (const path of ['summary/', 'each/heavy', 'all', 'order_by_execution_time', 'order_by_io_wait_time_sum']) {
      const off = await api.get(`${BASE}/${path}`);
      t.is(off.status, 409, path);
      t.deepEqual(off.body, { error: 'GSF_ERR_PROFILER_DISABLED',
        message: 'event profiling is off; turn it on with PUT /v1/configurations/enable_event_profiler/true' });
    }
    t.is((await api.put('/v1/configurations/enable_event_profiler/true')).status, 200);
    t.is((await api.get(`${BASE}/summary/`)).status, 200);
  } finally {
    await s.stop();
  }
});
