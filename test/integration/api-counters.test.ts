import test from 'ava';
import { native, nativeTesting } from '../../src/native.ts';
import path from 'node:path';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';

const testing = nativeTesting();

const PROCESS_FIELDS = ['cpu', 'idrss', 'inblock', 'isrss', 'ixrss', 'majflt', 'maxrss', 'minflt', 'msgrcv', 'msgsnd', 'nivcsw',
  'nsignals', 'nswap', 'nvcsw', 'oublock', 'refresh_interval', 'stime', 'updated', 'utime', 'vsz'];
const OS_FIELDS = ['bufferram', 'cpus', 'freeram', 'freeswap', 'load1', 'load15', 'load5', 'procs', 'refresh_interval', 'sharedram',
  'totalram', 'totalswap', 'type', 'updated', 'uptime'];

test.serial('counters REST: categories, listings, values, descriptions, callables and 404s', async (t) => {
  const s = await startTestServer({}, ['probe', 'monitored']);
  try {
    const api = client(s.server.api.port);
    native.counterUpdate('probe', 'players/ada/score', 7, false, 'Score of ada');
    const cats = await api.get('/v1/counters/');
    t.is(cats.status, 200);
    const categories = (cats.body as { categories: string[] }).categories;
    for (const c of ['event', 'event/performance/queue', 'event/profiling/all', 'event/profiling/outstanding', 'event/profiling/reset',
      'event/profiling/summary', 'mon', 'os', 'probe', 'process']) t.true(categories.includes(c), c);
    t.false(categories.includes('rpc_stat'), 'features that have not landed show nothing');
    t.deepEqual([...categories].sort(), categories);

    t.deepEqual((await api.get('/v1/counters/process/')).body, { category: 'process', counters: PROCESS_FIELDS });
    t.deepEqual((await api.get('/v1/counters/os')).body, { category: 'os', counters: OS_FIELDS });
    const osType = await api.get('/v1/counters/os/type/');
    t.deepEqual(osType.body, { category: 'os', counter: 'type', value: 'Linux' });
    const maxrss = (await api.get('/v1/counters/process/maxrss/')).body as { value: number };
    t.true(maxrss.value > 1000);
    t.deepEqual((await api.get('/v1/counters/process/maxrss/description/')).body,
      { category: 'process', counter: 'maxrss', description: 'Maximum resident set size (kB)' });

    t.deepEqual((await api.get('/v1/counters/probe/players/ada/score/')).body, { category: 'probe', counter: 'players/ada/score', value: 7 });
    t.deepEqual((await api.get('/v1/counters/probe/players/ada/score/description/')).body,
      { category: 'probe', counter: 'players/ada/score', description: 'Score of ada' });
    const queue = await api.get('/v1/counters/event/performance/queue/?values=true');
    t.deepEqual(queue.body, { category: 'event/performance/queue', counters: ['inflow_per_sec', 'throughput_per_sec', 'waiting'],
      values: { inflow_per_sec: 0, throughput_per_sec: 0, waiting: 0 } });
    const twice = await api.get('/v1/counters/event/performance/queue/?values=true&values=false');
    t.deepEqual([twice.status, twice.body], [400, { error: 'GSF_ERR_BAD_REQUEST', message: "query parameter 'values' must be given once, got 2 values" }]);

    t.deepEqual((await api.get('/v1/counters/mon/twice_level/')).body, { category: 'mon', counter: 'twice_level', value: 100 });
    const empty = await api.get('/v1/counters/mon/average/empty/');
    t.is(empty.status, 204);
    t.is(empty.text, '');
    t.deepEqual((await api.get('/v1/counters/mon/')).body, { category: 'mon', counters: ['average/empty', 'calm', 'level', 'twice_level'] });

    const noCat = await api.get('/v1/counters/nope/');
    t.is(noCat.status, 404);
    t.deepEqual(noCat.body, { error: 'GSF_ERR_COUNTER_NOT_FOUND', message: "no counter category 'nope'" });
    const noCounter = await api.get('/v1/counters/process/nope/');
    t.is(noCounter.status, 404);
    t.deepEqual(noCounter.body, { error: 'GSF_ERR_COUNTER_NOT_FOUND', message: "no counter 'nope' in category 'process'" });
    t.is((await api.get('/v1/counters/process/nope/description/')).status, 404);
  } finally {
    await s.stop();
  }
});

test.serial('a polled counter path follows new values, new categories, removals and re-creation', async (t) => {
  const s = await startTestServer({}, ['probe']);
  try {
    const api = client(s.server.api.port);
    const path = '/v1/counters/polled/deep/er/';
    native.counterUpdate('polled', 'deep/er', 1, false);
    t.deepEqual((await api.get(path)).body, { category: 'polled', counter: 'deep/er', value: 1 });
    t.deepEqual((await api.get(path)).body, { category: 'polled', counter: 'deep/er', value: 1 });
    native.counterIncrease('polled', 'deep/er', 1);
    t.deepEqual((await api.get(path)).body, { category: 'polled', counter: 'deep/er', value: 2 });
    // A longer category appearing later wins, as it would have on the first read.
    native.counterUpdate('polled/deep', 'er', 0.5, true);
    t.deepEqual((await api.get(path)).body, { category: 'polled/deep', counter: 'er', value: 0.5 });
    testing.counterRemove('polled/deep', 'er');
    t.deepEqual((await api.get(path)).body, { category: 'polled', counter: 'deep/er', value: 2 });
    testing.counterRemove('polled', 'deep/er');
    const gone = await api.get(path);
    t.is(gone.status, 404);
    t.deepEqual(gone.body, { error: 'GSF_ERR_COUNTER_NOT_FOUND', message: "no counter category 'polled/deep/er'" });
    native.counterUpdate('polled', 'deep/er', 3, false);
    t.deepEqual((await api.get(path)).body, { category: 'polled', counter: 'deep/er', value: 3 });
    native.counterUpdate('polled', 'other', 4, false);  // a new counter in a known category
    t.deepEqual((await api.get('/v1/counters/polled/other/')).body, { category: 'polled', counter: 'other', value: 4 });
    testing.counterRemove('polled', 'other');
    t.is((await api.get('/v1/counters/polled/other/')).status, 404);
    // A counter added later to a longer category that already existed takes the path over.
    native.counterUpdate('split', 'b/c', 1, false);
    native.counterUpdate('split/b', 'x', 2, false);
    t.deepEqual((await api.get('/v1/counters/split/b/c/')).body, { category: 'split', counter: 'b/c', value: 1 });
    t.deepEqual((await api.get('/v1/counters/split/b/c/')).body, { category: 'split', counter: 'b/c', value: 1 });
    native.counterUpdate('split/b', 'c', 3, false);
    t.deepEqual((await api.get('/v1/counters/split/b/c/')).body, { category: 'split/b', counter: 'c', value: 3 });
    native.counterUpdate('polled', 'huge', Infinity, true);
    t.deepEqual((await api.get('/v1/counters/polled/huge/')).body, { category: 'polled', counter: 'huge', value: null });
  } finally {
    await s.stop();
  }
});

test.serial('monitors write the SPEC line at the interval; unknown counters cannot be monitored', async (t) => {
  const s = await startTestServer({ CounterService: { counter_monitoring_interval_in_sec: 1, warning_threshold_event_queue_length: 5 },
    EventDispatcher: { event_threads_size: 1 } }, ['probe', 'monitored']);
  try {
    for (let i = 0; i < 40; i++) s.server.invoke('probe.note', { file: '', label: '', spinMs: 40 }, { tag: 42424242424 });
    const line = await waitFor(() => s.logs().find((l) => l.includes("The 'level of mon' counter exceeded threshold")), 5000);
    t.true(line.includes("The 'level of mon' counter exceeded threshold: value=50, threshold=10"), line);
    const q = await waitFor(() => s.logs().find((l) => l.includes("The 'event_queue_length of event' counter exceeded threshold")), 5000);
    t.regex(q, /The 'event_queue_length of event' counter exceeded threshold: value=\d+, threshold=5/);
    t.false(s.logs().some((l) => l.includes("'calm of mon'")));
  } finally {
    await s.stop();
  }
  await t.throwsAsync(startTestServer({}, [path.join(fixtures, 'bad-plugins', 'bad-monitor')]), {
    message: "plugin 'badmonitor' monitor 'nowhere/nothing' failed: counter 'nothing' of 'nowhere' is not registered; create it before monitoring it",
  });
});
