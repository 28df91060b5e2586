import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { TIMER_TAG, NULL_TAG } from '../../src/index.ts';
import { namedTag } from '../../src/events/tags.ts';
import { startTestServer, waitFor, type TestServer } from './_server.ts';
import type { NoteRecord } from '../fixtures/plugins/probe/index.ts';

const isRandom = (tag: number): boolean => tag >= 2 ** 32 && tag < 2 ** 53;

async function records(s: TestServer, n: number): Promise<Record<string, NoteRecord>> {
  const recs = await waitFor(() => (s.records().length >= n ? s.records() : null), 10000, `${n} notes`);
  return Object.fromEntries(recs.map((r) => [r.label, r]));
}

test.serial('inheritance, names and the exceptions of SPEC 6.2.4', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    const f = s.notes;
    const leaf = (label: string) => ({ file: f, label });
    // Outside any event: random tag, named after the event.
    s.server.invoke('probe.note', leaf('outside'));
    // Inside an event: children inherit; names are {parent}_#{n}; the name argument wins.
    s.server.invoke('probe.note', {
      file: f, label: 'parent', setName: 'my_event1',
      spawn: [{ payload: leaf('child1') }, { payload: leaf('child2') }, { payload: leaf('child3') },
        { payload: leaf('named'), name: 'explicit' }, { payload: leaf('usertag'), tag: 'named' }],
    }, { tag: 4242424242 });
    // A timer handler runs on the timer tag; its children get random tags; a timer created in such
    // a derived event still runs on the timer tag.
    s.server.thread.runtime.addTimer(10, 0, 'probe.note', {
      file: f, label: 'timer',
      spawn: [{ payload: { file: f, label: 'timer-child', timers: [{ ms: 5, payload: leaf('timer-grandtimer') }] } }],
    });
    // API-service handlers and engine callbacks.
    s.server.thread.runtime.invokeEngine('api', 'probe.note', { file: f, label: 'api', spawn: [{ payload: leaf('api-child') }] });
    s.server.thread.runtime.invokeEngine('engine', 'probe.note', { file: f, label: 'engine1' });
    s.server.thread.runtime.invokeEngine('engine', 'probe.note', { file: f, label: 'engine2' });

    const r = await records(s, 14);
    t.true(isRandom(r.outside!.tag));
    t.is(r.outside!.name, 'probe.note');
    t.is(r.outside!.kind, 'user');

    t.is(r.parent!.tag, 4242424242);
    t.is(r.parent!.name, 'my_event1');
    t.is(r.child1!.tag, 4242424242);
    t.is(r.child1!.name, 'my_event1_#1');
    t.is(r.child2!.name, 'my_event1_#2');
    t.is(r.child3!.name, 'my_event1_#3');
    t.is(r.named!.name, 'explicit');
    t.is(r.named!.tag, 4242424242);
    t.is(r.usertag!.tag, namedTag('probe'));
    t.deepEqual(r.parent!.children, [r.child1!.id, r.child2!.id, r.child3!.id, r.named!.id, r.usertag!.id]);

    t.is(r.timer!.tag, TIMER_TAG);
    t.is(r.timer!.kind, 'timer');
    t.true(isRandom(r['timer-child']!.tag));
    t.is(r['timer-child']!.name, 'probe.note_#1');
    t.is(r['timer-grandtimer']!.tag, TIMER_TAG);
    t.is(r['timer-grandtimer']!.kind, 'timer');

    t.is(r.api!.kind, 'api');
    t.true(isRandom(r['api-child']!.tag));
    t.not(r['api-child']!.tag, r.api!.tag);
    t.true(isRandom(r.engine1!.tag));
    t.not(r.engine1!.tag, r.engine2!.tag);
  } finally {
    await s.stop();
  }
});

test.serial('default names nest, and repeat exactly for parents of the same name, renamed or not', async (t) => {
  // One event thread: the later parents name their children from names that thread already made.
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } });
  try {
    const f = s.notes;
    const chain = (p: string, setName?: string) => ({
      file: f, label: p, setName,
      spawn: [{ payload: { file: f, label: `${p}.a`, spawn: [{ payload: { file: f, label: `${p}.a.a` } }] } }, { payload: { file: f, label: `${p}.b` } }],
    });
    for (const [i, p] of ['p1', 'p2', 'p3'].entries()) s.server.invoke('probe.note', chain(p, i === 2 ? 'renamed' : undefined), { tag: 7_000_000_000 + i });
    const r = await records(s, 12);
    for (const p of ['p1', 'p2']) {
      t.is(r[p]!.name, 'probe.note');
      t.is(r[`${p}.a`]!.name, 'probe.note_#1');
      t.is(r[`${p}.a.a`]!.name, 'probe.note_#1_#1');
      t.is(r[`${p}.b`]!.name, 'probe.note_#2');
    }
    t.is(r.p3!.name, 'renamed');
    t.is(r['p3.a']!.name, 'renamed_#1');
    t.is(r['p3.a.a']!.name, 'renamed_#1_#1');
    t.is(r['p3.b']!.name, 'renamed_#2');
  } finally {
    await s.stop();
  }
});

test.serial('enable_inheriting_event_tag=false gives children random tags', async (t) => {
  const s = await startTestServer({ EventDispatcher: { enable_inheriting_event_tag: false } });
  try {
    s.server.invoke('probe.note', { file: s.notes, label: 'p', spawn: [{ payload: { file: s.notes, label: 'c' } }] }, { tag: 5555555555 });
    const r = await records(s, 2);
    t.true(isRandom(r.c!.tag));
    t.not(r.c!.tag, 5555555555);
  } finally {
    await s.stop();
  }
});

test.serial('with both switches off, untagged events get the null tag', async (t) => {
  const s = await startTestServer({ EventDispatcher: { enable_inheriting_event_tag: false, enable_random_event_tag: false } });
  try {
    s.server.invoke('probe.note', { file: s.notes, label: 'p', spawn: [{ payload: { file: s.notes, label: 'c' } }] });
    const r = await records(s, 2);
    t.is(r.p!.tag, NULL_TAG);
    t.is(r.c!.tag, NULL_TAG);
  } finally {
    await s.stop();
  }
});

test.serial('invoke rejects unknown events and bad tags', async (t) => {
  const s = await startTestServer();
  try {
    t.throws(() => s.server.invoke('nope'), { code: 'GSF_ERR_UNKNOWN_EVENT', message: "no plugin registers an event named 'nope'" } as never);
    t.throws(() => s.server.invoke('probe.note', {}, { tag: -1 }), { message: 'invoke: tag must be a non-negative safe integer, got -1' });
    t.throws(() => s.server.invoke('probe.note', {}, { tag: 1.5 }), { code: 'GSF_ERR_BAD_ARGUMENT' } as never);
    t.throws(() => s.server.invoke('probe.note', {}, { name: '' }), { message: 'invoke: name must be a non-empty string' });
  } finally {
    await s.stop();
  }
});

test.serial('a child is numbered by creation order: a refused invoke creates none, a named child counts', async (t) => {
  const s = await startTestServer({}, ['probe', 'child-names']);
  try {
    const file = path.join(s.dir, 'children.jsonl');
    const read = (): Array<Record<string, unknown>> =>
      (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
    s.server.invoke('names.refusedThenChild', { file }, { name: 'my_event1' });
    s.server.invoke('names.namedThenDefault', { file }, { name: 'my_event2' });
    await waitFor(() => read().length === 4, 10000, 'four records');
    const by = Object.fromEntries(read().map((r) => [r.label, r]));
    t.deepEqual(by.refused!.errors, ['GSF_ERR_BAD_ARGUMENT', 'GSF_ERR_BAD_ARGUMENT']);
    t.is(by.after!.name, 'my_event1_#1');
    t.is(by.named!.name, 'explicit');
    t.is(by.unnamed!.name, 'my_event2_#2');
  } finally {
    await s.stop();
  }
});
