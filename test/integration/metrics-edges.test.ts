/**
 * `/metrics` and the dashboard's feeds at their edges: which routes take `?token=`, a plugin
 * callback that throws or returns what JSON cannot hold (a BigInt), plugin counters in built-in
 * categories, a whole profiler category read at once, histogram sums, and timeouts.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { native } from '../../src/native.ts';
import { namedTag } from '../../src/events/tags.ts';
import { startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';
import { setClusterMetrics } from '../../src/hooks/cluster-hooks.ts';
import { ownsClusterCounter, writeClusterMetrics } from '../../src/cluster/metrics.ts';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'index.ts');
const TOKEN = 's3cret';

/** A plugin of its own for these tests: two plugin routes, two callable counters (one throws), an event awaiting engine I/O. */
function edgesPlugin(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-metrics-edges-'));
  fs.writeFileSync(path.join(dir, 'index.ts'), `
import { definePlugin } from ${JSON.stringify(SRC)};
export default definePlugin({
  name: 'metrics-edges',
  version: '0.0.1',
  register(api) {
    api.http.route('GET', '/dashboards/{name}', (req, res) => res.json({ board: req.params.name, secret: 42 }));
    api.http.route('POST', '/{player}/ban', (req, res) => res.json({ banned: req.params.player }));
    api.counters.registerCallable('edge', 'ok', 'always 7', () => 7);
    api.counters.registerCallable('edge', 'boom', 'its backend is down', () => { throw new Error('backend unreachable'); });
    // Values a callback may return against its type: a driver's 64-bit integer, an object.
    api.counters.registerCallable('odd', 'big', 'a BigInt', () => 12345678901234567890n as unknown as number);
    api.counters.registerCallable('odd', 'obj', 'an object', () => ({ n: 1 }) as unknown as number);
    api.counters.registerCallable('odd', 'nan', 'NaN', () => NaN);
    // A text value with an unpaired surrogate (no UTF-8 form).
    api.counters.registerCallable('text', 'lone', 'half a pair', () => 'a\\udc00b');
    // '.' and '..' cannot be a URL path segment: refused as a category or a name.
    const refusals: string[] = [];
    for (const [c, n] of [['.', 'x'], ['..', 'x'], ['dots', '.'], ['dots', '..']]) {
      for (const call of [() => api.counters.define(c, n, ''), () => api.counters.increase(c, n), () => api.counters.registerCallable(c, n, '', () => 1)]) {
        try { call(); refusals.push('accepted'); } catch (err) { refusals.push((err as Error).message); }
      }
    }
    (globalThis as { dotRefusals?: string[] }).dotRefusals = refusals;
    // Reads with arguments of the wrong type, and a callable counter in a category gsf computes.
    const misuse: string[] = [];
    const reads = [() => api.counters.readInt(1 as never, 'x'), () => api.counters.readInt('edge', 2 as never), () => api.counters.list(5 as never),
      () => api.counters.registerCallable('os', 'mine', '', () => 1)];
    for (const call of reads) {
      try { call(); misuse.push('accepted'); } catch (err) { misuse.push(\`\${(err as { code?: string }).code}: \${(err as Error).message}\`); }
    }
    (globalThis as { counterMisuse?: string[] }).counterMisuse = misuse;
    api.counters.update('a/.', '..b', 3);
    // Counters in built-in categories: new names, and one the built-in category has itself.
    api.counters.update('os', 'game_shards', 3);
    api.counters.update('event', 'matches_started', 2);
    api.counters.updateDouble('event/profiling/summary', 'game/ratio', 0.5);
    api.counters.update('os', 'cpus', 999);
    api.counters.update('rpc_stat', 'game_relays', 5);
    api.event('edge.io', async (p: { ms: number }, ctx) => {
      if (p.ms > 0) await ctx.io(new Promise((resolve) => setTimeout(resolve, p.ms)));
    });
  },
});
`);
  return dir;
}

/** The value of one sample line (`series` with its labels), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test.serial('?token= opens the dashboard page and its assets only, not other routes under a /dashboard-like path', async (t) => {
  const s = await startTestServer({ ApiService: { api_service_token: TOKEN } }, [edgesPlugin()]);
  try {
    const base = `http://127.0.0.1:${s.server.api.port}`;
    const status = (method: string, p: string, headers: Record<string, string> = {}): Promise<number> =>
      fetch(base + p, { method, headers }).then(async (r) => { await r.arrayBuffer(); return r.status; });
    // What the docs grant: the page and its assets with ?token=, the plugin routes with the header.
    t.is(await status('GET', `/dashboard/?token=${TOKEN}`), 200);
    t.is(await status('GET', `/dashboard/assets/dashboard.js?token=${TOKEN}`), 200);
    t.is(await status('GET', '/dashboards/ops', { Authorization: `Bearer ${TOKEN}` }), 200);
    t.is(await status('POST', '/alice/ban', { Authorization: `Bearer ${TOKEN}` }), 200);
    t.is(await status('POST', `/alice/ban?token=${TOKEN}`), 401);
    // Not the dashboard: the query token is not taken (a URL's token ends up in access logs).
    t.deepEqual({
      pluginGet: await status('GET', `/dashboards/ops?token=${TOKEN}`),
      pluginPost: await status('POST', `/dashboard/ban?token=${TOKEN}`),
      unknownPath: await status('GET', `/dashboardz?token=${TOKEN}`),
    }, { pluginGet: 401, pluginPost: 401, unknownPath: 401 });
  } finally {
    await s.stop();
  }
});

test.serial('a plugin callback that throws leaves the rest of /metrics and of its category readable, with a log line', async (t) => {
  const s = await startTestServer({}, [edgesPlugin()]);
  try {
    const api = client(s.server.api.port);
    const metrics = await api.get('/metrics');
    t.is(metrics.status, 200);
    t.is(sample(metrics.text, 'gsf_plugin_value{category="edge",name="ok"}'), 7);
    t.false(metrics.text.includes('name="boom"'));
    t.true(metrics.text.includes('gsf_events_waiting '));
    const feed = await api.get('/v1/counters/edge/?values=true');
    t.deepEqual([feed.status, feed.body], [200, { category: 'edge', counters: ['boom', 'ok'], values: { boom: null, ok: 7 } }]);
    t.true(s.logs().some((l) => l.includes('counter edge/boom: its callback failed (left out of the reading): backend unreachable')));
    // A BigInt reads as the nearest number; an object or NaN as no value. The category read the
    // dashboard makes every second answers, and the server goes on.
    const odd = await api.get('/v1/counters/odd/?values=true');
    t.deepEqual([odd.status, odd.body], [200, { category: 'odd', counters: ['big', 'nan', 'obj'], values: { big: 12345678901234567000, nan: null, obj: null } }]);
    t.is((await api.get('/v1/counters/odd/big/')).status, 200);
    t.is((await api.get('/v1/counters/odd/obj/')).status, 204);
    t.is(sample((await api.get('/metrics')).text, 'gsf_plugin_value{category="odd",name="big"}'), 12345678901234567000);
    t.is((await api.get('/v1/counters/edge/ok/')).status, 200);
    const refusals = (globalThis as { dotRefusals?: string[] }).dotRefusals!;
    t.is(refusals.length, 12);
    t.deepEqual([...new Set(refusals)], [
      "counter category must not be '.': a URL cannot carry it as a path segment",
      "counter category must not be '..': a URL cannot carry it as a path segment",
      "counter name must not be '.': a URL cannot carry it as a path segment",
      "counter name must not be '..': a URL cannot carry it as a path segment",
    ]);
    t.false((await api.get('/v1/counters/')).text.includes('"dots"'));
    t.deepEqual((globalThis as { counterMisuse?: string[] }).counterMisuse, [
      'GSF_ERR_BAD_ARGUMENT: counter category must be a non-empty string',
      'GSF_ERR_BAD_ARGUMENT: counter name must be a non-empty string',
      'GSF_ERR_BAD_ARGUMENT: counter category must be a non-empty string',
      "GSF_ERR_BAD_ARGUMENT: counter 'mine' of 'os': 'os' is a built-in category, whose values gsf computes; register callable counters in a category of your own",
    ]);
    // Dots inside a longer name are fine: the category 'a/.' is one segment, written a%2F.
    t.deepEqual((await api.get('/v1/counters/a%2F./..b/')).body, { category: 'a/.', counter: '..b', value: 3 });
  } finally {
    await s.stop();
  }
});

test.serial('a text counter with an unpaired surrogate: REST escapes it as JSON does; /metrics stays UTF-8 with U+FFFD', async (t) => {
  const s = await startTestServer({}, [edgesPlugin()]);
  try {
    const api = client(s.server.api.port);
    t.deepEqual((await api.get('/v1/counters/text/lone/')).body, { category: 'text', counter: 'lone', value: 'a\udc00b' });
    const raw = Buffer.from(await (await fetch(`http://127.0.0.1:${s.server.api.port}/metrics`)).arrayBuffer());
    // Text format 0.0.4 is UTF-8, and Prometheus refuses a label value that is not.
    const text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    t.true(text.includes('\ngsf_plugin_info{category="text",name="lone",value="a\uFFFDb"} 1\n'));
  } finally {
    await s.stop();
  }
});

test.serial('a plugin counter in a built-in category is in /metrics as any plugin counter; a name the category has keeps its built-in value', async (t) => {
  const s = await startTestServer({}, [edgesPlugin()]);
  try {
    const api = client(s.server.api.port);
    t.deepEqual((await api.get('/v1/counters/os/game_shards/')).body, { category: 'os', counter: 'game_shards', value: 3 });
    t.deepEqual((await api.get('/v1/counters/os/cpus/')).body, { category: 'os', counter: 'cpus', value: os.cpus().length });
    const pluginLines = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('gsf_plugin_value{category="')
      && /category="(os|event|event\/profiling\/summary|rpc_stat)"/.test(l));
    const text = (await api.get('/metrics')).text;
    t.deepEqual(pluginLines(text), [
      'gsf_plugin_value{category="event",name="matches_started"} 2',
      'gsf_plugin_value{category="event/profiling/summary",name="game/ratio"} 0.5',
      'gsf_plugin_value{category="os",name="game_shards"} 3',
      'gsf_plugin_value{category="rpc_stat",name="game_relays"} 5',
    ]);
    // The built-in counter of the name both have keeps its own family and value.
    t.is(sample(text, 'gsf_os_cpus'), os.cpus().length);
    // With the cluster's families on, its counters are theirs and a plugin's beside them is a plugin value.
    native.counterIncrease('rpc_stat', 'messages_sent', 4);
    setClusterMetrics({ owns: ownsClusterCounter, write: writeClusterMetrics });
    let clustered: string;
    try {
      clustered = (await api.get('/metrics')).text;
    } finally {
      setClusterMetrics(null);
    }
    t.is(sample(clustered, 'gsf_cluster_records_total{direction="sent"}'), 4);
    t.false(clustered.includes('name="messages_sent"'));
    t.deepEqual(pluginLines(clustered), pluginLines(text));
  } finally {
    await s.stop();
  }
});

test.serial('GET /v1/counters/event/profiling/all/?values=true reads the profiler a bounded number of times, not twice per counter', async (t) => {
  const s = await startTestServer({}, ['timeout-probe']);
  const EVENTS = 20;
  try {
    const file = path.join(s.dir, 'marks.jsonl');
    for (let i = 0; i < EVENTS; i++) s.server.invoke('probe.mark', { file, label: `feed_${i}` }, { name: `feed_${i}` });
    await waitFor(() => native.profilerAll(0).filter(([n]) => n.startsWith('feed_')).length === EVENTS, 10000, 'the profiles');
    const original = native.profilerAll;
    let calls = 0;
    (native as { profilerAll: typeof original }).profilerAll = (order) => {
      calls++;
      return original.call(native, order);
    };
    let r;
    try {
      r = await client(s.server.api.port).get('/v1/counters/event/profiling/all/?values=true');
    } finally {
      (native as { profilerAll: typeof original }).profilerAll = original;
    }
    t.is(r.status, 200);
    const body = r.body as { counters: string[]; values: Record<string, number> };
    t.is(body.values['feed_7/all_time/execution_count'], 1);
    t.is(body.counters.length, Object.keys(body.values).length);
    t.true(body.counters.length > EVENTS * 10);
    t.true(calls <= 2, `${calls} profilerAll calls for ${body.counters.length} counters`);
  } finally {
    await s.stop();
  }
});

test.serial('gsf_event_io_wait_seconds_sum never goes down while events with no I/O wait complete', async (t) => {
  const s = await startTestServer({}, [edgesPlugin()]);
  try {
    const api = client(s.server.api.port);
    const series = 'gsf_event_io_wait_seconds_sum{event="edge_io"}';
    const countSeries = 'gsf_event_io_wait_seconds_count{event="edge_io"}';
    const scrape = async (count: number): Promise<number> => {
      const text = await waitFor(async () => {
        const m = await api.get('/metrics');
        return sample(m.text, countSeries) === count ? m.text : null;
      }, 10000, `${count} events profiled`);
      return sample(text, series)!;
    };
    for (const ms of [3, 7, 11]) s.server.invoke('edge.io', { ms }, { name: 'edge_io' });
    const sums = [await scrape(3)];
    t.true(sums[0]! > 0.015, `the first three waited ${sums[0]} s`);
    for (let batch = 1; batch <= 40; batch++) {
      for (let i = 0; i < 3; i++) s.server.invoke('edge.io', { ms: 0 }, { name: 'edge_io' });
      sums.push(await scrape(3 + batch * 3));
    }
    const drops = sums.flatMap((v, i) => (i > 0 && v < sums[i - 1]! ? [`${sums[i - 1]} -> ${v}`] : []));
    t.deepEqual(drops, []);
  } finally {
    await s.stop();
  }
});

test.serial('a timeout with two events queued behind it on its tag counts 1 timeout and 3 cancelled events (it and the two)', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 150 } }, ['timeout-probe']);
  const file = path.join(s.dir, 'marks.jsonl');
  try {
    const api = client(s.server.api.port);
    const cancelledBefore = sample((await api.get('/metrics')).text, 'gsf_events_cancelled_total')!;
    const tag = namedTag('edges-late');
    // Awaits past its timeout; the two behind it on its tag are dropped with it.
    const late = s.server.invoke('probe.mark', { file, label: 'late', awaitMs: 1000 }, { tag, name: 'edges_late' });
    s.server.invoke('probe.mark', { file, label: 'q1' }, { tag, name: 'edges_queued' });
    s.server.invoke('probe.mark', { file, label: 'q2' }, { tag, name: 'edges_queued' });
    await waitFor(() => s.logs().find((l) => l.includes(`Event timeout: event_name=edges_late, event_id=${late}`)), 10000, 'the timeout line');
    const text = await waitFor(async () => {
      const r = await api.get('/metrics');
      return sample(r.text, 'gsf_events_waiting') === 0 && sample(r.text, 'gsf_events_outstanding') === 0 ? r.text : null;
    }, 10000, 'an empty queue');
    const ran = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { label: string }).label) : [];
    t.deepEqual({
      timeouts: sample(text, 'gsf_event_timeouts_total{event="edges_late"}'),
      cancelled: sample(text, 'gsf_events_cancelled_total')! - cancelledBefore,
      ran,
    }, { timeouts: 1, cancelled: 3, ran: ['late'] });
  } finally {
    await s.stop();
  }
});
