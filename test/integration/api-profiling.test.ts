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
    // Four events whose mean and sum orders differ in every pair of orderings (ms per run):
    //   burst:  1 × handler 80, io-wait 8     handler mean 80  sum 80   io mean 8   sum 8    execution ~88  sum ~88
    //   chatty: 6 × handler 20                handler mean 20  sum 120  io 0                 execution ~20  sum ~120
    //   fetch:  1 × handler 6,  io-wait 200   handler mean 6   sum 6    io mean 200 sum 200  execution ~206 sum ~206
    //   poll:   6 × io-wait 50                handler ~0              io mean 50  sum 300  execution ~50  sum ~300
    // One at a time, each after the last completed, so queue time stays near zero.
    const runs: Array<[string, number, { spinMs?: number; ioMs?: number }]> = [
      ['burst', 1, { spinMs: 80, ioMs: 8 }], ['chatty', 6, { spinMs: 20 }], ['fetch', 1, { spinMs: 6, ioMs: 200 }], ['poll', 6, { ioMs: 50 }],
    ];
    const count = async (): Promise<number> => ((await api.get(`${BASE}/summary/`)).body as { all_time: { count: number } }).all_time.count;
    let done = 0;
    for (const [name, times, script] of runs) {
      for (let i = 0; i < times; i++) {
        s.server.invoke('probe.note', { file: '', label: '', ...script }, { name });
        done++;
        await waitFor(async () => (await count()) === done);
      }
    }
    const summary = await api.get(`${BASE}/summary/`);
    t.is(summary.status, 200);
    const sb = summary.body as Record<string, Record<string, number>>;
    t.deepEqual(Object.keys(sb), ['all_time', 'last1min']);
    t.deepEqual(Object.keys(sb.all_time!), SUMMARY_KEYS);
    t.is(sb.all_time!.count, 14);
    t.is(sb.last1min!.count, 14);

    const each = await api.get(`${BASE}/each/burst`);
    t.is(each.status, 200);
    const burst = (each.body as Record<string, { all_time: Record<string, number>; last1min: Record<string, number> }>).burst!;
    t.deepEqual(Object.keys(burst.all_time), EVENT_KEYS);
    t.false('timeout_count' in burst.last1min);
    t.is(burst.all_time.execution_count, 1);
    t.true(burst.all_time.handler_time_mean_in_sec! >= 0.079, String(burst.all_time.handler_time_mean_in_sec));
    t.true(burst.all_time.io_wait_time_mean_in_sec! >= 0.006, String(burst.all_time.io_wait_time_mean_in_sec));

    const missing = await api.get(`${BASE}/each/ghost`);
    t.is(missing.status, 404);
    t.deepEqual(missing.body, { error: 'GSF_ERR_PROFILE_NOT_FOUND', message: "no profile for event 'ghost' (profiled events must be named and have run)" });

    const all = (await api.get(`${BASE}/all`)).body as Record<string, unknown>;
    t.deepEqual(Object.keys(all).sort(), ['burst', 'chatty', 'fetch', 'poll']);

    const order = async (path: string): Promise<string[]> => ((await api.get(`${BASE}/${path}`)).body as Entry[]).map((e) => e.event_name);
    t.deepEqual(await order('order_by_handler_time'), ['burst', 'chatty', 'fetch', 'poll']);
    t.deepEqual(await order('order_by_handler_time_sum'), ['chatty', 'burst', 'fetch', 'poll']);
    t.deepEqual(await order('order_by_io_wait_time'), ['fetch', 'poll', 'burst', 'chatty']);
    t.deepEqual(await order('order_by_io_wait_time_sum'), ['poll', 'fetch', 'burst', 'chatty']);
    t.deepEqual(await order('order_by_execution_time'), ['fetch', 'burst', 'poll', 'chatty']);
    t.deepEqual(await order('order_by_execution_time_sum'), ['poll', 'fetch', 'chatty', 'burst']);
    // Each entry carries the figures it was ordered by.
    const bySum = (await api.get(`${BASE}/order_by_execution_time_sum`)).body as Entry[];
    t.deepEqual(bySum.map((e) => e.all_time.execution_count), [6, 1, 6, 1]);
    t.deepEqual(Object.keys(bySum[0]!), ['event_name', 'all_time', 'last1min']);

    t.deepEqual((await api.post(`${BASE}/reset`)).body, { reset: true });
    t.is(((await api.get(`${BASE}/summary`)).body as { all_time: { count: number } }).all_time.count, 0);

    t.is((await api.put('/v1/configurations/enable_event_profiler/false')).status, 200);
    for (const path of ['summary/', 'each/burst', 'all', 'order_by_execution_time', 'order_by_io_wait_time_sum']) {
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
