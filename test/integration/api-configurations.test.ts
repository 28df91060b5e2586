import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { namedTag } from '../../src/events/tags.ts';
import { startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';

const MUTABLE = ['alsologtostderr', 'client_current_version', 'enable_event_profiler', 'event_threads_size', 'minloglevel',
  'probe_level', 'rpc_message_logging_level', 'session_message_logging_level', 'v'];

test.serial('configuration REST: list, one flag, unknown flag, PUT, invalid values, the bool rule', async (t) => {
  const s = await startTestServer({ RuntimeConfiguration: { additional_configurations: ['probe_level'] } });
  try {
    const api = client(s.server.api.port);
    const list = await api.get('/v1/configurations/');
    t.is(list.status, 200);
    t.deepEqual(Object.keys(list.body as object), MUTABLE);
    // The test server's one event thread (the default of 4 is test/unit/config/manifest.ts's).
    t.deepEqual((list.body as Record<string, unknown>).event_threads_size,
      { type: 'uint64', desc: 'Number of main event threads', value: '1' });

    t.deepEqual((await api.get('/v1/configurations/minloglevel')).body,
      { minloglevel: { type: 'int32', desc: 'Minimum log level: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL', value: '0' } });
    t.deepEqual((await api.get('/v1/configurations/probe_level')).body,
      { probe_level: { type: 'int32', desc: 'A user flag for tests', value: '3' } });

    const unknown = await api.get('/v1/configurations/event_timeout_in_ms');
    t.is(unknown.status, 400);
    const ub = unknown.body as Record<string, { message: string; available_configurations: Record<string, unknown> }>;
    t.is(ub.event_timeout_in_ms!.message, "'event_timeout_in_ms' is not a configurable flag");
    t.deepEqual(Object.keys(ub.event_timeout_in_ms!.available_configurations), MUTABLE);
    t.deepEqual(ub.event_timeout_in_ms!.available_configurations.v, { type: 'int32', desc: 'Log verbosity: verbose lines up to this level are written' });

    const put = await api.put('/v1/configurations/v/2');
    t.is(put.status, 200);
    t.deepEqual(put.body, { v: { result: 'v set to 2\n' } });
    t.is(s.server.thread.flags.get('v'), 2);
    const bad = await api.put('/v1/configurations/v/loud');
    t.is(bad.status, 400);
    t.deepEqual(bad.body, { v: { result: 'loud is not a valid value for v\n' } });
    t.is((await api.put('/v1/configurations/event_threads_size/0')).status, 400);
    const putUnknown = await api.put('/v1/configurations/nope/1');
    t.is(putUnknown.status, 400);
    t.is((putUnknown.body as Record<string, { message: string }>).nope!.message, "'nope' is not a configurable flag");

    // The answer names the value stored (a number sets true or false), as GET shows it.
    for (const [text, value] of [['true', 'true'], ['0', 'false'], ['7', 'true'], ['false', 'false'], ['-1', 'true']] as const) {
      t.deepEqual((await api.put(`/v1/configurations/alsologtostderr/${text}`)).body, { alsologtostderr: { result: `alsologtostderr set to ${value}\n` } });
      t.is((await api.get('/v1/configurations/alsologtostderr')).body && ((await api.get('/v1/configurations/alsologtostderr')).body as Record<string, { value: string }>).alsologtostderr!.value, value);
    }
    t.is((await api.put('/v1/configurations/alsologtostderr/maybe')).status, 400);
    t.deepEqual((await api.put('/v1/configurations/client_current_version/2.0.1')).body,
      { client_current_version: { result: 'client_current_version set to 2.0.1\n' } });
    t.is(s.server.thread.flags.get('client_current_version'), '2.0.1');
  } finally {
    await s.stop();
  }
});

test.serial('flag changes reach event workers at once: user flags, minloglevel and v', async (t) => {
  const s = await startTestServer({ RuntimeConfiguration: { additional_configurations: ['probe_level'] }, EventDispatcher: { event_threads_size: 2 } });
  try {
    const api = client(s.server.api.port);
    const out = path.join(s.dir, 'flags.jsonl');
    t.is((await api.put('/v1/configurations/probe_level/9')).status, 200);
    s.server.invoke('probe.flag', { file: out, label: 'after' });
    await waitFor(() => fs.existsSync(out));
    t.deepEqual(JSON.parse(fs.readFileSync(out, 'utf8')), { label: 'after', probe_level: 9 });

    s.server.invoke('probe.log', { label: 'A' });
    await waitFor(() => s.logs().some((l) => l.includes('probe info A')));
    t.false(s.logs().some((l) => l.includes('probe verbose A')));
    t.is((await api.put('/v1/configurations/minloglevel/1')).status, 200);
    t.is((await api.put('/v1/configurations/v/1')).status, 200);
    // B and the marker share a tag, so the marker runs only after B's handler has returned; log
    // lines are written synchronously, so whatever B logged is in the file by then.
    const tag = namedTag('minloglevel-check');
    s.server.invoke('probe.log', { label: 'B' }, { tag });
    s.server.invoke('probe.note', { file: s.notes, label: 'marker' }, { tag });
    await waitFor(() => s.records().length === 1);
    t.is(s.records()[0]!.tag, tag);
    t.false(s.logs().some((l) => l.includes('probe info B')), 'INFO dropped at minloglevel 1');
    t.false(s.logs().some((l) => l.includes('probe verbose B')), 'verbose lines are INFO, dropped at minloglevel 1 even at v 1');
    t.is((await api.put('/v1/configurations/minloglevel/0')).status, 200);
    s.server.invoke('probe.log', { label: 'C' }, { tag });
    s.server.invoke('probe.note', { file: s.notes, label: 'marker C' }, { tag });
    await waitFor(() => s.records().length === 2);
    t.true(s.logs().some((l) => l.includes('probe info C')), 'INFO written again at minloglevel 0');
    t.true(s.logs().some((l) => l.includes('probe verbose C')), 'verbose written at v 1');
  } finally {
    await s.stop();
  }
});

test.serial('compatible client versions: GET, POST replaces, and every 400', async (t) => {
  const s = await startTestServer({ AppInfo: { client_compatible_versions: ['0.9.0'] } });
  try {
    const api = client(s.server.api.port);
    const path = '/v1/configurations/compatible_client_versions';
    t.deepEqual((await api.get(path)).body, { current_compatible_versions: ['0.9.0'] });
    const set = await api.post(path, JSON.stringify(['0.9.1', '0.9.2']));
    t.is(set.status, 200);
    t.deepEqual(set.body, { current_compatible_versions: ['0.9.1', '0.9.2'] });
    t.deepEqual((await api.get(path)).body, { current_compatible_versions: ['0.9.1', '0.9.2'] });
    t.deepEqual(s.server.thread.flags.get('client_compatible_versions'), ['0.9.1', '0.9.2']);
    for (const [body, message] of [
      ['not json', 'body must be a JSON array of strings (it is not JSON)'],
      ['{"a":1}', 'body must be a JSON array of strings'],
      ['["1.0", 2]', 'body must be a JSON array of strings'],
      ['"1.0"', 'body must be a JSON array of strings'],
      ['["1.0", ""]', 'body must be a JSON array of non-empty strings (entry 1 is empty)'],
      // Read as every request body is: text with no UTF-8 form is refused, not stored.
      ['["1.0", "\\ud800"]', 'request body: the value of \'1\' holds an unpaired UTF-16 surrogate (text with no UTF-8 form)'],
    ] as const) {
      const r = await api.post(path, body);
      t.is(r.status, 400, body);
      t.deepEqual(r.body, { error: 'GSF_ERR_BAD_REQUEST', message });
    }
    t.deepEqual((await api.get(path)).body, { current_compatible_versions: ['0.9.1', '0.9.2'] }, 'a bad POST changes nothing');
  } finally {
    await s.stop();
  }
});

test.serial('PUT event_threads_size resizes the pool under load: none lost, repeated or reordered', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    const api = client(s.server.api.port);
    const tags = 300;
    const rounds = 40;
    const before = native.counterReadInt('probe', 'notes') ?? 0;
    const violations = native.counterReadInt('probe', 'order_violations');
    for (let seq = 1; seq <= rounds; seq++) {
      for (let k = 0; k < tags; k++) s.server.invoke('probe.note', { file: '', label: '', key: `h${k}`, seq }, { tag: namedTag(`http-${k}`) });
      if (seq === 10) t.deepEqual((await api.put('/v1/configurations/event_threads_size/3')).body, { event_threads_size: { result: 'event_threads_size set to 3\n' } });
      if (seq === 25) t.is((await api.put('/v1/configurations/event_threads_size/1')).status, 200);
      await new Promise((r) => setImmediate(r));
    }
    await waitFor(() => native.counterReadInt('probe', 'notes') === before + tags * rounds, 60000, 'all events');
    await new Promise((r) => setTimeout(r, 100));
    t.is(native.counterReadInt('probe', 'notes'), before + tags * rounds);
    t.is(native.counterReadInt('probe', 'order_violations'), violations);
    t.is(s.server.dispatcher.size, 1);
  } finally {
    await s.stop();
  }
});
