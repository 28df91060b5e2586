/**
 * `/metrics` by Prometheus' own rules: `promtool check metrics` (Debian's `prometheus`
 * package, installed by .ci/run) reports no problem on a live server's output, and the
 * per-event histograms hold what the events did.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { native } from '../../src/native.ts';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { client, parseExposition } from './_http.ts';

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.status === 0;
const title = 'promtool check metrics finds no problem in /metrics of a server with sessions, plugin counters and profiled events';


(havePromtool ? test.serial : test.serial.skip)(havePromtool ? title : `${title} (skipped: promtool not found; apt-get install prometheus, as .ci/run does)`, async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } }, ['session-probe', 'probe', 'monitored']);
  try {
    const c = await s.connect();
    t.deepEqual(await c.request('echo', { hi: 1 }), { hi: 1 });
    for (let i = 0; i < 3; i++) s.server.invoke('probe.note', { file: s.notes, label: 'slow', sleepSyncMs: 30 }, { name: 'slow_one' });
    for (let i = 0; i < 20; i++) s.server.invoke('probe.note', { file: s.notes, label: 'fast' }, { name: 'fast "one"\\' });
    await waitFor(() => s.records().length === 23, 10000, 'the events');
    // The profiles are recorded once the events complete, just after their handlers wrote the notes.
    await waitFor(() => native.profilerEvent('slow_one')?.all_time.execution_count === 3
      && native.profilerEvent('fast "one"\\')?.all_time.execution_count === 20, 10000, 'the profiles');
    const r = await client(s.server.api.port).get('/metrics');
    t.is(r.status, 200);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: r.text, encoding: 'utf8' });
    t.is(`${check.stdout}${check.stderr}`, '');
    t.is(check.status, 0);

    const m = parseExposition(r.text);
    // Handlers that slept 30 ms: none at or below 25 ms, all three in +Inf.
    t.is(m.get('gsf_event_handler_seconds_bucket{event="slow_one",le="0.025"}'), 0);
    t.is(m.get('gsf_event_handler_seconds_bucket{event="slow_one",le="+Inf"}'), 3);
    t.is(m.get('gsf_event_handler_seconds_count{event="slow_one"}'), 3);
    t.true(m.get('gsf_event_handler_seconds_sum{event="slow_one"}')! >= 0.09);
    t.is(m.get('gsf_event_execution_seconds_count{event="fast \\"one\\"\\\\"}'), 20);
    // Buckets are cumulative: never decreasing along le.
    const les = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];
    for (const metric of ['gsf_event_execution_seconds', 'gsf_event_handler_seconds', 'gsf_event_io_wait_seconds', 'gsf_event_queue_seconds']) {
      const counts = les.map((le) => m.get(`${metric}_bucket{event="slow_one",le="${le}"}`)!);
      t.deepEqual(counts.filter((n, i) => i > 0 && n < counts[i - 1]!), [], metric);
      t.is(counts.at(-1), 3, metric);
    }
    t.is(m.get('gsf_sessions'), 1);
    t.is(m.get('gsf_concurrent_users'), 0);
    t.is(m.get('gsf_plugin_value{category="mon",name="level"}'), 50);
    t.true(m.get('gsf_process_cpu_seconds_total{mode="user"}')! > 0);
    t.is(m.get('gsf_event_profiler_enabled'), 1);
    await c.close();
  } finally {
    await s.stop();
  }
});
