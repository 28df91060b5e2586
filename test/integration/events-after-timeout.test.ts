/**
 * Awaiting events at their edges: an event that resumes after its timeout, ids of invokes made
 * before and after an await, and a resize while events await. Each test states the rule it
 * checks (SPEC 6, docs/decisions.md "Events, threads and plugins").
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { namedTag } from '../../src/events/tags.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';

const probePlugin = path.join(fixtures, 'plugins', 'timeout-probe');

interface Line { label: string; phase?: string; id?: number; tag?: number; child?: number; thread: number }

function lines(file: string): Line[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line) : [];
}

// decisions.md: what an awaiting event produced "is dropped if it times out"; SPEC 3.3/6.3: a
// timeout cancels the event and every event of its tag. An event cancelled by its timeout
// must not go on queueing events (on its cancelled tag or any other) or changing counters.
test.serial('an awaiting event that timed out invokes no events and changes no counters afterwards', async (t) => {
  const s: TestServer = await startTestServer({ EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 300 } }, [probePlugin]);
  const file = path.join(s.dir, 'marks.jsonl');
  try {
    const tag = namedTag('probe-late');
    const otherTag = namedTag('probe-late-other');
    // Awaits far past its timeout, then invokes a child on its own tag, one on another tag, and counts.
    const late = s.server.invoke('probe.mark', { file, label: 'late', awaitMs: 1500, otherTag }, { tag, name: 'late' });
    await waitFor(() => s.logs().find((l) => l.includes(`Event timeout: event_name=late, event_id=${late}`)), 10000, 'timeout line');
    await waitFor(() => lines(file).some((l) => l.label === 'late' && l.phase === 'resumed'), 10000, 'the handler resumed after its timeout');
    // A marker on the timed-out tag, invoked after the resume: once it ran, anything the late
    // event queued on that tag before it has run too.
    s.server.invoke('probe.mark', { file, label: 'marker' }, { tag });
    s.server.invoke('probe.mark', { file, label: 'marker2' }, { tag: otherTag });
    await waitFor(() => {
      const all = lines(file);
      return all.some((l) => l.label === 'marker') && all.some((l) => l.label === 'marker2');
    }, 10000, 'the markers');
    const labels = lines(file).map((l) => l.label);
    t.deepEqual({
      childOnItsTag: labels.includes('late.child'),
      eventOnAnotherTag: labels.includes('late.other'),
      counterAfterTimeout: native.counterReadInt('timeout_probe', 'after_await'),
    }, { childOnItsTag: false, eventOnAnotherTag: false, counterAfterTimeout: null }, `ran: ${labels.join(',')}`);
  } finally {
    await s.stop();
  }
});

// decisions.md: "Event ids are process-unique integers, increasing in each thread's invoke order".
test.serial('ids that one event thread returns from invoke increase in its invoke order', async (t) => {
  const s: TestServer = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, [probePlugin]);
  const file = path.join(s.dir, 'ids.jsonl');
  try {
    const tag = namedTag('probe-ids');
    // One after another on one tag and one thread: a synchronous invoke (a held id from the
    // thread's reserved block), an invoke after an await (pushed at once), a synchronous one again.
    const modes = ['sync', 'async', 'sync', 'async', 'sync'] as const;
    modes.forEach((mode, i) => s.server.invoke('probe.ids', { file, mode, label: `${mode}${i}` }, { tag }));
    const got = await waitFor(() => { const l = lines(file); return l.length === modes.length ? l : null; }, 10000, 'every step');
    t.is(new Set(got.map((l) => l.thread)).size, 1, 'one thread invoked them all');
    const ids = got.map((l) => l.child!);
    t.deepEqual(got.map((l) => l.label), modes.map((m, i) => `${m}${i}`));
    t.deepEqual([...ids].sort((a, b) => a - b), ids, `child ids in invoke order: ${got.map((l) => `${l.label}=${l.child}`).join(' ')}`);
  } finally {
    await s.stop();
  }
});

// worker-pools.ts: a resize lets the old workers finish the claims and awaiting events they
// hold; "nothing is lost, repeated or reordered". SPEC 6.2.2: a tag's events run in order.
test.serial('a resize while events await keeps every tag in order, each event once', async (t) => {
  const s: TestServer = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, [probePlugin]);
  const file = path.join(s.dir, 'resize.jsonl');
  try {
    const tags = 6;
    // Per tag: an event that awaits, then three that do not, queued behind it.
    for (let k = 0; k < tags; k++) {
      const tag = namedTag(`probe-resize-${k}`);
      s.server.invoke('probe.mark', { file, label: `t${k}.a`, awaitMs: 400 }, { tag });
      for (let j = 0; j < 3; j++) s.server.invoke('probe.mark', { file, label: `t${k}.q${j}` }, { tag });
    }
    await waitFor(() => lines(file).filter((l) => l.phase === 'start' && l.label.endsWith('.a')).length === tags, 10000, 'all awaiting');
    await s.server.dispatcher.resize(2);
    await s.server.dispatcher.resize(3);
    const expected = tags * (1 + 1 + 3 + 1); // start, resumed, 3 queued, the child
    const all = await waitFor(() => { const l = lines(file); return l.length >= expected ? l : null; }, 20000, 'every event');
    await waitFor(() => s.server.dispatcher.idle(), 10000, 'idle');
    const got = lines(file);
    t.is(got.length, expected);
    for (let k = 0; k < tags; k++) {
      const mine = got.filter((l) => l.label.startsWith(`t${k}.`)).map((l) => `${l.label}:${l.phase}`);
      t.deepEqual(mine, [`t${k}.a:start`, `t${k}.a:resumed`, `t${k}.q0:start`, `t${k}.q1:start`, `t${k}.q2:start`, `t${k}.a.child:start`]);
    }
    t.is(all.length, expected);
    t.is(native.counterReadInt('engine', 'events_awaiting'), 0);
  } finally {
    await s.stop();
  }
});
