import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { namedTag } from '../../src/events/tags.ts';
import { intern } from '../../src/events/runtime.ts';
import { GsfClient } from '../../src/sdk/index.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';
import { startSessionServer } from './_session.ts';
import type { Step } from '../fixtures/plugins/await-probe/index.ts';

const awaitProbe = path.join(fixtures, 'plugins', 'await-probe');

interface MarkLine { label: string; thread: number; id: number; tag: number; phase: string; name?: string }

function marks(s: TestServer, file: string): MarkLine[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as MarkLine) : [];
}

test.serial('1,000 sessions whose handlers await 1 s are all answered, awaiting side by side on one thread', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 } }, [awaitProbe]);
  const clients: GsfClient[] = [];
  try {
    for (let i = 0; i < 1000; i += 100) {
      clients.push(...await Promise.all(Array.from({ length: 100 }, () => s.connect(i % 200 === 0 ? 'json' : 'msgpack'))));
    }
    const replies = await Promise.all(clients.map((c) => c.request<{ waited: number }>('wait', { ms: 1000 }, 60000)));
    t.is(replies.length, 1000);
    t.true(replies.every((r) => r.waited === 1000));
    // One at a time, 1,000 awaits of 1 s would take 1,000 s: here most awaited together. The
    // await is long beside the time 1,000 requests take to arrive on a busy machine (an await
    // of 100 ms once peaked at 492: the first events had finished before the last arrived).
    const peak = native.counterReadInt('engine', 'events_awaiting_peak')!;
    t.true(peak >= 500, `peak of awaiting events ${peak}`);
    t.is(native.counterReadInt('engine', 'events_awaiting'), 0);
    const profile = native.profilerEvent('wait')!;
    t.is(profile.all_time.execution_count, 1000);
    t.true(profile.all_time.io_wait_time_mean_in_sec >= 0.9, 'the awaits count as io-wait');
    t.true(profile.all_time.handler_time_mean_in_sec < 0.05, 'handler time is the time the event held the thread');
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await s.stop();
  }
});

test.serial('per-tag order holds under interleaved awaits: 100,000 events over 500 tags on 2 threads', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } }, [awaitProbe]);
  try {
    const tags = 500;
    const perTag = 200;
    for (let seq = 1; seq <= perTag; seq++) {
      for (let k = 0; k < tags; k++) {
        const step: Step = { key: `k${k}`, seq, delayMs: (k + seq) % 7 === 0 ? 1 : 0 };
        s.server.invoke('await.step', step, { tag: namedTag(`await-${k}`) });
      }
    }
    await waitFor(() => native.counterReadInt('await_probe', 'steps') === tags * perTag, 120000, 'every step');
    t.is(native.counterReadInt('await_probe', 'order_violations'), null);
    for (let k = 0; k < tags; k += 37) t.is(native.counterReadInt('await_done', `k${k}`), perTag);
    t.is(s.server.dispatcher.totals.failed, 0);
  } finally {
    await s.stop();
  }
});

test.serial('an awaiting event that times out frees its tag and leaves its worker serving', async (t) => {
  // Far beyond 'other' and its 50 ms await on a loaded machine; 'stuck' awaits forever.
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 2000 } }, [awaitProbe]);
  const file = path.join(s.dir, 'marks.jsonl');
  try {
    const tag = namedTag('stuck-awaiting');
    const stuck = s.server.invoke('await.mark', { file, label: 'stuck', awaitMs: Infinity }, { tag, name: 'stuck' });
    const queued = s.server.invoke('await.mark', { file, label: 'queued' }, { tag });
    s.server.invoke('await.mark', { file, label: 'other', awaitMs: 50 }, { tag: namedTag('other') });
    const line = await waitFor(() => s.logs().find((l) => l.includes('Event timeout:')), 10000, 'timeout line');
    t.true(line.includes(`Event timeout: event_name=stuck, event_id=${stuck}, event_tag=${tag}`), line);
    t.true(s.logs().some((l) => l.includes('cancelled 1 queued event(s)') && l.includes(String(queued))));
    // The tag takes new events, on the same worker thread: nothing was ended.
    s.server.invoke('await.mark', { file, label: 'after' }, { tag });
    const all = await waitFor(() => {
      const m = marks(s, file);
      return m.some((r) => r.label === 'after') && m.some((r) => r.label === 'other.child') ? m : null;
    }, 10000, 'after and other');
    const threads = new Set(all.map((r) => r.thread));
    t.is(threads.size, 1, 'one worker thread served everything');
    t.false(all.some((r) => r.label === 'queued'), 'the queued event of the timed-out tag was cancelled');
    t.false(all.some((r) => r.label === 'stuck' && r.phase === 'resumed'));
    const other = all.find((r) => r.label === 'other' && r.phase === 'resumed')!;
    t.is(other.name, 'await.mark', 'the context survives the await');
    const child = all.find((r) => r.label === 'other.child')!;
    t.is(child.tag, other.tag, 'a child invoked after an await inherits the tag');
    t.is(native.profilerEvent('stuck')!.all_time.timeout_count, 1);
    t.is(native.counterReadInt('engine', 'events_awaiting'), 0);
    t.is(s.server.watchdog.timeouts, 1);
  } finally {
    await s.stop();
  }
});

test.serial('a handler whose events await is marked in the park hints until one returns at once; its tag keeps its order', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, [awaitProbe]);
  const file = path.join(s.dir, 'marks.jsonl');
  const hints = new Uint8Array(native.parkHintsView());
  const id = intern('await.maybe');
  const done = (n: number): Promise<MarkLine[]> => waitFor(() => {
    const m = marks(s, file).filter((r) => r.phase !== 'awaiting');
    return m.length >= n ? m : null;
  }, 10000, `${n} marks`);
  try {
    t.is(hints.length, 1 << 16);
    t.is(hints[id], 0);
    const tag = namedTag('maybe');
    s.server.invoke('await.maybe', { file, label: 'w0', awaitMs: 5 }, { tag });
    await done(1);
    t.is(hints[id], 1, 'its event parked');
    s.server.invoke('await.maybe', { file, label: 'q0' }, { tag });
    await done(2);
    t.is(hints[id], 0, 'its event returned at once');
    // Events that park and events that return, queued together on one tag: the claims that cut
    // the tag's run after each parking event keep the push order.
    const labels = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? `w${i}` : `q${i}`));
    for (const label of labels) s.server.invoke('await.maybe', { file, label, ...(label[0] === 'w' ? { awaitMs: 1 } : {}) }, { tag });
    const all = await done(2 + labels.length);
    t.deepEqual(all.slice(2).map((r) => r.label), labels);
    t.is(s.server.dispatcher.totals.failed, 0);
  } finally {
    await s.stop();
  }
});

test.serial('the cap on awaiting events per thread holds, and every event completes', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, max_awaiting_events_per_thread: 5 } }, [awaitProbe]);
  const file = path.join(s.dir, 'marks.jsonl');
  try {
    for (let i = 0; i < 60; i++) s.server.invoke('await.mark', { file, label: `m${i}`, awaitMs: 20 });
    await waitFor(() => marks(s, file).filter((r) => r.label.endsWith('.child')).length === 60, 20000, 'all children');
    // A child can write its mark before its parent's end is counted on the main thread.
    await waitFor(() => native.counterReadInt('engine', 'events_awaiting') === 0, 20000, 'no event awaiting');
    t.is(native.counterReadInt('engine', 'events_awaiting_peak'), 5);
    t.is(marks(s, file).filter((r) => r.phase === 'resumed').length, 60);
  } finally {
    await s.stop();
  }
});

test.serial('a graceful stop waits for awaiting events', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, [awaitProbe]);
  const file = path.join(s.dir, 'marks.jsonl');
  s.server.invoke('await.mark', { file, label: 'late', awaitMs: 300 });
  await waitFor(() => marks(s, file).some((r) => r.phase === 'awaiting'), 5000, 'awaiting');
  await s.stop();
  t.true(marks(s, file).some((r) => r.label === 'late' && r.phase === 'resumed'));
});
