/**
 * An event worker runs the claimed events of a native event handler in the addon, without
 * JavaScript per event (`native.pluginRunEvents`), and hands back to JavaScript only the event
 * whose call left something to do. Everything an event run one by one gets still holds: each
 * tag's order, the effects of the events that had some (log lines), failures with their line and
 * counter, the profiler's counts and times, the slow-event line, a timeout in the middle of a
 * run, and object conflicts, whose reruns get their own event's payload again (the native-runs
 * fixture).
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, waitFor, type TestServer } from './_server.ts';
import { OBJECTS_PROBE, idle, readNotes, startObjectServer } from './_objects.ts';

const RUNS = path.join(fixtures, 'native-plugins', 'native-runs');
const value = (category: string, name: string): number => native.counterValue(category, name) ?? 0;
const KEYS = 64;
const STEPS = 50;

let s: TestServer;

test.before(async () => {
  s = await startObjectServer({}, { EventDispatcher: { event_threads_size: 2, slow_event_log_threshold_in_ms: 150, event_timeout_in_ms: 800 } },
    [OBJECTS_PROBE, RUNS]);
});

test.after.always(async () => {
  await s?.stop();
});

test.serial('runs of native events keep each tag\'s order; their log lines, failures, profile and counters are those of events run one by one', async (t) => {
  const failedBefore = value('engine', 'events_failed');
  const ranBefore = value('engine', 'events_run');
  const profiled = native.profilerEvent('runs.step')?.all_time.execution_count ?? 0;
  // Step n of every key in turn: each claim holds many keys' steps, run back to back.
  for (let n = 0; n < STEPS; n++) {
    for (let key = 0; key < KEYS; key++) s.server.invoke('runs.step', [key, n], { tag: 20_000_000_000 + key });
  }
  await waitFor(() => value('native_runs', 'seen') === KEYS * STEPS, 20000, 'every step');
  await idle();
  t.is(value('native_runs', 'out_of_order'), 0, 'every key saw its steps in order');
  // n % 25 == 7 fails: steps 7 and 32 of each key.
  t.is(value('engine', 'events_failed') - failedBefore, 2 * KEYS);
  t.is(value('engine', 'events_run') - ranBefore, KEYS * STEPS);
  // n % 10 == 0 logs a line: an effect the worker applies after the run stops there.
  const logged = await waitFor(() => {
    const lines = s.logs().filter((l) => /native-runs: key \d+ step \d+/.test(l));
    return lines.length === KEYS * 5 ? lines : null;
  }, 10000, 'every step\'s log line');
  t.is(new Set(logged.map((l) => /key (\d+) step (\d+)/.exec(l)![0])).size, KEYS * 5);
  const failure = await waitFor(() => s.logs().find((l) => l.includes("event 'runs.step' failed")));
  t.regex(failure, /plugin 'native-runs' event 'runs\.step' failed: INVALID_ARGUMENT: step (7|32) of key \d+ fails on purpose/);
  const profile = await waitFor(() => {
    const p = native.profilerEvent('runs.step');
    return p !== null && p.all_time.execution_count - profiled === KEYS * STEPS ? p : null;
  }, 10000, 'the profile of every step');
  t.true(profile.all_time.handler_time_mean_in_sec > 0);
  t.true(profile.all_time.queue_time_max_in_sec > 0);
});

test.serial('a slow native event in a run: its handler time is profiled and the slow-event line is logged', async (t) => {
  // Fast steps around it, of the same handler run and of another one.
  for (let n = 0; n < 20; n++) s.server.invoke('runs.step', [KEYS, n], { tag: 21_000_000_000 });
  const id = s.server.invoke('runs.spin', 200, { tag: 21_000_000_001 });
  for (let n = 20; n < 40; n++) s.server.invoke('runs.step', [KEYS, n], { tag: 21_000_000_000 });
  await waitFor(() => value('native_runs', 'spun') === 1, 20000, 'the spin');
  const line = await waitFor(() => s.logs().find((l) => l.includes(`Slow event: event_name=runs.spin, event_id=${id}`)), 10000, 'the slow-event line');
  t.truthy(line);
  const spin = await waitFor(() => native.profilerEvent('runs.spin'), 10000, 'the spin\'s profile');
  t.is(spin.all_time.execution_count, 1);
  t.true(spin.all_time.handler_time_max_in_sec >= 0.2, String(spin.all_time.handler_time_max_in_sec));
  await idle();
  t.is(value('native_runs', 'out_of_order'), 0);
});

test.serial('a native event that times out in a run: the later events of its tag are cancelled (SPEC 6), those of other tags run, in order', async (t) => {
  const seen = value('native_runs', 'seen');
  const spun = value('native_runs', 'spun');
  // The spin outlives the event timeout; the steps of its own tag queue behind it (claimed with
  // it or not) and are cancelled with it; the other tag's steps run beside it.
  const id = s.server.invoke('runs.spin', 1200, { tag: 23_000_000_000 });
  for (let n = 0; n < 30; n++) {
    s.server.invoke('runs.step', [KEYS + 1, n], { tag: 23_000_000_000 });
    s.server.invoke('runs.step', [KEYS + 2, n], { tag: 23_000_000_001 });
  }
  await waitFor(() => s.logs().find((l) => l.includes(`Event timeout: event_name=runs.spin, event_id=${id}`)), 10000, 'the timeout line');
  await waitFor(() => value('native_runs', 'seen') === seen + 30, 20000, 'the other tag\'s steps');
  await waitFor(() => value('native_runs', 'spun') === spun + 1, 10000, 'the spin\'s late return');
  await idle();
  t.is(value('native_runs', 'seen'), seen + 30, 'the spin\'s tag ran none of its steps, the other tag each once');
  t.is(value('native_runs', 'out_of_order'), 0);
});

test.serial('native events that conflict on an object run again on their own payload', async (t) => {
  const names = ['alpha', 'gamma'];
  const rerunsBefore = value('object', 'event_reruns');
  const failedBefore = value('engine', 'events_failed');
  const per = 60;
  // Each bump its own tag, so both threads bump the same two objects at once and conflict.
  for (let i = 0; i < per * names.length; i++) s.server.invoke('runs.bump', names[i % names.length], { tag: 22_000_000_000 + i });
  await idle();
  t.is(value('engine', 'events_failed') - failedBefore, 0);
  const file = path.join(s.dir, 'bumps.jsonl');
  for (const name of names) s.server.invoke('objp.open', { name, coins: 0, file });
  const notes = await waitFor(() => {
    const n = readNotes<{ coins: number }>(file);
    return n.length === names.length ? n : null;
  }, 10000, 'both accounts');
  t.deepEqual(notes.map((n) => n.coins), [per, per]);
  t.log(`reruns: ${value('object', 'event_reruns') - rerunsBefore}`);
  fs.rmSync(file);
});
