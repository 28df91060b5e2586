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
    // Four events whose mean and sum orders differ in every pair of orderings (ms per run). The
    // gaps between neighbours are 30 ms or more per run and 130 ms or more per sum (exact zeros
    // aside), as a busy machine adds tens of ms of queue time and preemption to the runs it sums:
    //   burst:  1 × handler 300, io-wait 20   handler mean 300 sum 300  io mean 20  sum 20   execution ~320 sum ~320
    //   chatty: 5 × handler 90                handler mean 90  sum 450  io 0                 execution ~90  sum ~450
    //   fetch:  1 × handler 30, io-wait 700   handler mean 30  sum 30   io mean 700 sum 700  execution ~730 sum ~730
    //   poll:   5 × io-wait 180               handler ~0                io mean 180 sum 900  execution ~180 sum ~900
    // One at a time, each after the last completed, so queue time stays small.
    const runs: Array<[string, number, { spinMs?: number; ioMs?: number }]> = [
      ['burst', 1, { spinMs: 300, ioMs: 20 }], ['chatty', 5, { spinMs: 90 }], ['fetch', 1, { spinMs: 30, ioMs: 700 }], ['poll', 5, { ioMs: 180 }],
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
    t.is(sb.all_time!.count, 12);
    t.is(sb.last1min!.count, 12);

    const each = await api.get(`${BASE}/each/burst`);
    t.is(each.status, 200);
    const burst = (each.body as Record<string, { all_time: Record<string, number>; last1min: Record<string, number> }>).burst!;
    t.deepEqual(Object.keys(burst.all_time), EVENT_KEYS);
    t.false('timeout_count' in burst.last1min);
    t.is(burst.all_time.execution_count, 1);
    t.true(burst.all_time.handler_time_mean_in_sec! >= 0.299, String(burst.all_time.handler_time_mean_in_sec));
    t.true(burst.all_time.io_wait_time_mean_in_sec! >= 0.018, String(burst.all_time.io_wait_time_mean_in_sec));

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
    t.deepEqual(bySum.map((e) => e.all_time.execution_count), [5, 1, 5, 1]);
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
