import test from 'ava';
import { native } from '../../src/native.ts';
import { namedTag } from '../../src/events/tags.ts';
import { startTestServer, waitFor } from './_server.ts';

test.serial('same-tag events run strictly in creation order under 3 workers with thousands of tags', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 3 } });
  try {
    const tags = 3000;
    const perTag = 8;
    for (let seq = 1; seq <= perTag; seq++) {
      for (let k = 0; k < tags; k++) {
        s.server.invoke('probe.note', { file: '', label: '', key: `o${k}`, seq }, { tag: namedTag(`order-${k}`) });
      }
    }
    const total = tags * perTag;
    await waitFor(() => native.counterReadInt('probe', 'notes') === total, 60000, 'all events');
    t.is(native.counterReadInt('probe', 'order_violations'), null);
    for (let k = 0; k < tags; k += 97) t.is(native.counterReadInt('probe_seq', `o${k}`), perTag);
    t.is(s.server.dispatcher.totals.failed, 0);
  } finally {
    await s.stop();
  }
});

test.serial('events of different tags overlap in time; the same tag never does', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    // Long beside the time between the two threads taking a and b, even on a loaded machine.
    const note = (label: string) => ({ file: s.notes, label, spinMs: 1000 });
    s.server.invoke('probe.note', note('a'), { tag: namedTag('A') });
    s.server.invoke('probe.note', note('b'), { tag: namedTag('B') });
    s.server.invoke('probe.note', note('c1'), { tag: namedTag('C') });
    s.server.invoke('probe.note', note('c2'), { tag: namedTag('C') });
    const recs = await waitFor(() => (s.records().length === 4 ? s.records() : null), 10000, 'four notes');
    const by = Object.fromEntries(recs.map((r) => [r.label, r]));
    const overlap = (x: typeof recs[number], y: typeof recs[number]) => x.start < y.end && y.start < x.end;
    // Which tags pair up depends on the order the threads claim them (run queues are swept, not
    // one FIFO), but with two threads and three tags two different tags must run side by side.
    const pair = recs.flatMap((x) => recs.map((y) => [x, y] as const)).find(([x, y]) => x.tag !== y.tag && overlap(x, y));
    t.truthy(pair, `different tags ran in parallel: ${JSON.stringify(recs)}`);
    t.not(pair![0].thread, pair![1].thread);
    t.false(overlap(by.c1!, by.c2!), 'same tag never overlaps');
    t.true(by.c1!.end <= by.c2!.start);
  } finally {
    await s.stop();
  }
});
