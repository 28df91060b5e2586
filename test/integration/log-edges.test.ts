/**
 * The Logging component at its edges (docs/reference/manifest.md#logs): odd field values (BigInt,
 * cycles, Errors, `__proto__`, clashing names), run-time flag changes on every thread that logs,
 * native lines outside a call (the server log, escaped, at its level), and flood summaries.
 * Fixtures: test/fixtures/plugins/probe-log, test/fixtures/native-plugins/probe-log.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { transact } from '../../src/objects/plugin-api.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';
import { apiUrl } from './_session.ts';
import { startGsfChild, type GsfChild } from './_gsf-child.ts';
import { OBJECTS_PROBE, counter, idle, startObjectServer } from './_objects.ts';

const PROBE_LOG = path.join(fixtures, 'plugins', 'probe-log');
const NATIVE_DIR = path.join(fixtures, 'native-plugins', 'probe-log');

interface Outcome { msg: string; threw: string | null }

function outcomes(file: string): Outcome[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Outcome) : [];
}

/** Invokes probelog.line and waits for the handler's note; the note says whether api.log threw. */
async function logLine(s: TestServer, payload: Record<string, unknown>): Promise<Outcome> {
  const file = path.join(s.dir, 'outcomes.jsonl');
  const msg = String(payload.msg);
  s.server.invoke('probelog.line', { file, ...payload });
  return waitFor(() => outcomes(file).find((o) => o.msg === msg), 10000, `the note of '${msg}'`);
}

test.serial('api.log with a BigInt field writes its line and does not throw', async (t) => {
  const s = await startTestServer({}, [PROBE_LOG]);
  try {
    const o = await logLine(s, { msg: 'bigint-field-line', odd: 'bigint' });
    t.is(o.threw, null, 'api.log.info threw on a BigInt field');
    const line = await waitFor(() => s.logs().find((l) => l.includes('bigint-field-line')), 3000, 'the line').catch(() => undefined);
    t.truthy(line, 'no log line was written');
    t.true(line?.includes('12345678901234567890') ?? false, line);
  } finally {
    await s.stop();
  }
});

test.serial('api.log with a circular field writes its line and does not throw', async (t) => {
  const s = await startTestServer({}, [PROBE_LOG]);
  try {
    const o = await logLine(s, { msg: 'circular-field-line', odd: 'circular' });
    t.is(o.threw, null, 'api.log.info threw on a circular field');
    const line = await waitFor(() => s.logs().find((l) => l.includes('circular-field-line')), 3000, 'the line').catch(() => undefined);
    t.truthy(line, 'no log line was written');
  } finally {
    await s.stop();
  }
});

test.serial('api.log with an Error field keeps the error message in the line (text and json)', async (t) => {
  for (const format of ['text', 'json'] as const) {
    const s = await startTestServer({ Logging: { log_format: format } }, [PROBE_LOG]);
    try {
      const o = await logLine(s, { msg: `error-field-line-${format}`, odd: 'error' });
      t.is(o.threw, null);
      const line = await waitFor(() => s.logs().find((l) => l.includes(`error-field-line-${format}`)), 10000, 'the line');
      // Today the field is written as `"err":{}`: the line says there was an error and drops what it was.
      t.true(line.includes('disk on fire'), `${format}: ${line}`);
    } finally {
      await s.stop();
    }
  }
});

test.serial('json format: a field named __proto__ is written, not silently dropped', async (t) => {
  const s = await startTestServer({ Logging: { log_format: 'json' } }, [PROBE_LOG]);
  try {
    const o = await logLine(s, { msg: 'proto-field-line', odd: 'proto' });
    t.is(o.threw, null);
    const line = await waitFor(() => s.logs().find((l) => l.includes('proto-field-line')), 10000, 'the line');
    const record = JSON.parse(line) as Record<string, unknown>;
    t.is(record.other, 1, line);
    t.true(line.includes('client-chosen'), `the __proto__ field was dropped: ${line}`);
  } finally {
    await s.stop();
  }
});

test.serial('minloglevel changed over REST applies to the objects writer thread at once', async (t) => {
  // Every commit is a slow query (threshold 0): the writer writes a WARNING line for each.
  const s = await startObjectServer({}, { CounterService: { warning_threshold_slow_query_in_sec: 0 } }, [OBJECTS_PROBE]);
  try {
    await transact((tx) => tx.create('ProbeAccount', { name: 'before' }));
    await waitFor(() => s.logs().some((l) => l.includes('Slow query: database=sqlite')), 10000, 'the first slow-query line');
    const put = await fetch(`${apiUrl(s)}/v1/configurations/minloglevel/2`, { method: 'PUT' });
    t.is(put.status, 200);
    const slowBefore = s.logs().filter((l) => l.includes('Slow query:')).length;
    const slow = counter('object_database_stat', 'sqlite/slow_queries');
    await transact((tx) => tx.create('ProbeAccount', { name: 'after-1' }));
    // The writer handles commits in order: once the second is done, the first's line is out.
    await transact((tx) => tx.create('ProbeAccount', { name: 'after-2' }));
    await waitFor(() => counter('object_database_stat', 'sqlite/slow_queries') >= slow + 2, 10000, 'two more slow queries counted');
    s.server.thread.log.error('probe-log marker after the commits');
    await waitFor(() => s.logs().some((l) => l.includes('probe-log marker')), 10000, 'the marker');
    const warnings = s.logs().filter((l) => l.includes('Slow query:')).slice(slowBefore);
    t.deepEqual(warnings, [], 'WARNING lines written at minloglevel 2 (ERROR)');
  } finally {
    await s.stop();
  }
});

/** `gsf start` in a child process with the native probe, logging to server.log with `logging` too. */
async function startNativeChild(logging: Record<string, unknown>): Promise<GsfChild & { log(): string }> {
  const c = await startGsfChild({ log_file: 'server.log', ...logging }, [NATIVE_DIR]);
  return { ...c, log: () => c.file('server.log') };
}

test.serial("a native plugin's line outside a call (gsf_no_call) goes to log_file, escaped, at its level", async (t) => {
  const c = await startNativeChild({});
  try {
    await c.started();
    // The line is written during init, before the server listens: wherever it went, it is there now.
    const everywhere = `${c.out()}${c.err()}${c.log()}`.split('\n');
    t.log('stderr:', JSON.stringify(c.err()));
    // Log injection: no physical line may start with the forged head.
    t.deepEqual(everywhere.filter((l) => l.startsWith('E2099')), [], 'a native line forged a line of its own');
    // log_file: "Append to this file ... instead of stdout": the line is in the log file.
    const line = c.log().split('\n').find((l) => l.includes('probe-log nocall'));
    t.truthy(line, 'not in log_file');
    t.true(line?.startsWith('W') ?? false, line);
    t.true(line?.includes('probe-log nocall\\nE20991231 00:00:00.000 main] FORGED BY NATIVE') ?? false, line);
  } finally {
    await c.stop();
  }
});

test.serial("minloglevel 2 holds for a native plugin's WARNING line outside a call", async (t) => {
  const c = await startNativeChild({ minloglevel: 2 });
  try {
    await c.started();
    // "minloglevel: 0 INFO, 1 WARNING, 2 ERROR": a WARNING line is not written at 2, anywhere.
    t.false(`${c.out()}${c.err()}${c.log()}`.includes('probe-log nocall'), `stderr: ${JSON.stringify(c.err())}`);
  } finally {
    await c.stop();
  }
});

test.serial('json format: a field named time next to one named field_time loses neither value', async (t) => {
  const s = await startTestServer({ Logging: { log_format: 'json' } }, [PROBE_LOG]);
  try {
    await logLine(s, { msg: 'clash-line', fields: { time: 'client-time', field_time: 'own-field' } });
    const line = await waitFor(() => s.logs().find((l) => l.includes('clash-line')), 10000, 'the line');
    t.true(line.includes('client-time') && line.includes('own-field'), line);
  } finally {
    await s.stop();
  }
});

test.serial('a flood of failing events just before stop still writes its "suppressed N more line(s)" summary', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } });
  let stopped = false;
  try {
    const n = 40;
    // Spread into one second as far as possible; every failure is written or counted.
    for (let i = 0; i < n; i++) s.server.invoke('probe.note', { file: '', label: 'f', throw: 'flood-boom' }, { name: 'flood-fail' });
    await waitFor(() => s.logs().filter((l) => l.includes('flood-boom')).length >= 10, 10000, 'the first failure lines');
    await idle();
    await s.stop();
    stopped = true;
    const lines = s.logs();
    const written = lines.filter((l) => l.includes('flood-boom')).length;
    const left = lines.map((l) => /suppressed (\d+) more line\(s\) of 'flood-fail'/.exec(l)).reduce((sum, m) => sum + (m ? Number(m[1]) : 0), 0);
    t.is(written + left, n, `written ${written}, summarised ${left}`);
  } finally {
    if (!stopped) await s.stop();
  }
});
