/**
 * The timer API at its edges: intervals below a nanosecond, timers further out than setTimeout
 * waits, an event cancelled by its timeout, and an object event that runs again.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor, type TestServer } from './_server.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { idle, OBJECTS_PROBE, readNotes, startObjectServer, storeArgs } from './_objects.ts';

{
/**
 * Edges of `api.timers`: intervals that round to nothing, delays past what Node's setTimeout
 * holds, and timers created by an event that was cancelled by its timeout. The plugin is
 * written into a temporary folder so each test drives the public PluginApi, as a game would.
 */
/** A plugin whose events call `api.timers` with what their payload says and note what ran. */
function edgePlugin(): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-edges-')), 'edges');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'index.ts'), `import fs from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { definePlugin } from 'gsf';

export default definePlugin({
  name: 'edges',
  version: '0.0.1',
  register(api) {
    const note = (file: string, label: string): void => fs.appendFileSync(file, label + '\\n');
    // Starts a repeating timer and keeps its id where the test can read it.
    api.event<{ ms: number }>('edges.every', (p) => {
      const id = api.timers.every(p.ms, 'edges.tick');
      api.counters.update('edges', 'every_id', id);
    });
    api.event('edges.tick', () => {
      api.counters.increase('edges', 'ticks');
    });
    api.event<{ file: string; label: string }>('edges.note', (p) => note(p.file, p.label));
    // Timer names that are not names: each refused at the call.
    api.event<{ file: string }>('edges.names', (p) => {
      for (const name of ['', 42]) {
        try {
          api.timers.after(1, 'edges.tick', undefined, { name: name as string });
          note(p.file, 'accepted');
        } catch (err) {
          note(p.file, (err as Error).message);
        }
      }
    });
    api.event<{ file: string; label: string; ms: number }>('edges.wait', async (p) => {
      await delay(p.ms);
      note(p.file, p.label);
    });
    // Awaits past its timeout, then starts a one-shot timer.
    api.event<{ file: string; awaitMs: number }>('edges.late', async (p) => {
      note(p.file, 'late:start');
      await delay(p.awaitMs);
      note(p.file, 'late:resumed');
      api.timers.after(1, 'edges.note', { file: p.file, label: 'late:timer' });
    });
  },
});
`);
  return dir;
}

const lines = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

// types.ts: `every` "Runs `event` every `ms`", and it accepts any ms > 0 (api.ts). An interval
// below a nanosecond becomes 0 in native/core/timer_store.cc (MsToNs truncates), and an interval
// of 0 there means one-shot: the timer fires once and is gone, silently.
test.serial('a timer name that is empty or not a string is refused where the timer is started', async (t) => {
  const s: TestServer = await startTestServer({}, [edgePlugin()]);
  try {
    const file = path.join(s.dir, 'names.txt');
    s.server.invoke('edges.names', { file });
    const read = (): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
    await waitFor(() => read().length === 2, 5000, 'both answers');
    t.deepEqual(read(), [
      "timer 'edges.tick': name must be a non-empty string",
      "timer 'edges.tick': name must be a non-empty string",
    ]);
  } finally {
    await s.stop();
  }
});

test.serial('timers.every with a sub-nanosecond interval keeps repeating instead of firing once', async (t) => {
  const s: TestServer = await startTestServer({}, [edgePlugin()]);
  try {
    s.server.invoke('edges.every', { ms: 1e-7 });
    await waitFor(() => (native.counterReadInt('edges', 'ticks') ?? 0) >= 1, 5000, 'the first tick');
    const id = native.counterReadInt('edges', 'every_id')!;
    t.true(id > 0);
    // A repeating timer is still there after its first tick: cancel finds it.
    t.is(native.timerCancel(id), true, 'the repeating timer was still alive after its first tick');
  } finally {
    await s.stop();
  }
});

// A timer a month out (2^31 ms is about 24.8 days) must simply wait. The dispatcher hands the
// whole wait to setTimeout (src/events/main/dispatcher.ts scheduleTimers), which cannot hold
// more than 2^31-1 ms: Node warns (TimeoutOverflowWarning) and fires after 1 ms instead, so the
// main thread wakes, asks the store, and re-arms every millisecond for as long as the timer lives.
test.serial('a timer due in more than 2^31 ms does not make the main thread poll every millisecond', async (t) => {
  const s: TestServer = await startTestServer({}, [edgePlugin()]);
  const overflow: string[] = [];
  const onWarning = (w: Error): void => { if (w.name === 'TimeoutOverflowWarning') overflow.push(w.message); };
  process.on('warning', onWarning);
  const realFire = native.timerFire.bind(native);
  let fires = 0;
  native.timerFire = () => { fires++; return realFire(); };
  const file = path.join(s.dir, 'notes.txt');
  try {
    // The only timer: due in 31 days (a monthly reset).
    const month = s.server.thread.runtime.addTimer(31 * 24 * 3600 * 1000, 0, 'edges.note', { file, label: 'month' });
    // The window: an event (not a timer, which would change what the dispatcher waits for)
    // that awaits 100 ms. Meanwhile the dispatcher has nothing to fire.
    s.server.invoke('edges.wait', { file, label: 'window', ms: 100 });
    await waitFor(() => lines(file).includes('window'), 5000, 'the window event');
    const seen = { fires, overflowWarnings: overflow.length };
    t.true(native.timerCancel(month), 'the month timer was still waiting');
    // One firing when the timer was added (it was the earliest), none while it waits.
    t.is(seen.overflowWarnings, 0, `TimeoutOverflowWarning ${seen.overflowWarnings} times in 100 ms`);
    t.true(seen.fires <= 3, `the dispatcher fired timers ${seen.fires} times in 100 ms with nothing due`);
  } finally {
    native.timerFire = realFire;
    process.off('warning', onWarning);
    await s.stop();
  }
});

// docs/decisions.md: "An event that timed out while it awaited is cancelled for good: when its
// handler resumes, what it does is dropped, as its earlier work was: its invokes …, its counter
// changes and its session operations." A timer it starts after resuming is work it does too;
// `invoke` and counters check `timedOut` (src/events/runtime.ts), `addTimer` does not.
test.serial('an awaiting event that timed out starts no timer when it resumes', async (t) => {
  const s: TestServer = await startTestServer({ EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 100 } }, [edgePlugin()]);
  const file = path.join(s.dir, 'late.txt');
  try {
    const late = s.server.invoke('edges.late', { file, awaitMs: 400 }, { name: 'late' });
    await waitFor(() => s.logs().find((l) => l.includes(`Event timeout: event_name=late, event_id=${late}`)), 10000, 'timeout line');
    await waitFor(() => lines(file).includes('late:resumed'), 10000, 'the resume');
    // Timers fire in due order on one tag: once this marker (due 50 ms after the resume) ran,
    // a timer the late event started (due 1 ms after it) has run too.
    s.server.thread.runtime.addTimer(50, 0, 'edges.note', { file, label: 'marker' });
    await waitFor(() => lines(file).includes('marker'), 10000, 'the marker');
    t.deepEqual(lines(file), ['late:start', 'late:resumed', 'marker']);
  } finally {
    await s.stop();
  }
});
}

{
/**
 * A timer started by an event that runs again after an object conflict. docs/guides/objects.md
 * ("Effects wait for the commit"): "a rerun drops what the conflicting run held, so a client
 * never sees a success whose data was lost and a rerun never answers twice"; the events it
 * invoked are held and dropped with the conflicting run. A timer is an event invoked later, but
 * `api.timers.after` goes straight to the native timer store (src/events/runtime.ts addTimer),
 * so the conflicting run's timer fires as well as the committed run's: the handler runs twice.
 */
interface Note { label: string; run: number }

/** Like test/fixtures/plugins/objects-rerun-probe, with a timer where that one invokes a child. */
function rerunTimerPlugin(): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-edges-')), 'edges-rerun');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'index.ts'), `import fs from 'node:fs';
import { definePlugin } from 'gsf';

const runs = new Map<string, number>();

export default definePlugin({
  name: 'edges-rerun',
  version: '0.0.1',
  register(api) {
    api.event<{ id: string; file: string }>('edges.parent', async (p) => {
      const run = (runs.get(p.id) ?? 0) + 1;
      runs.set(p.id, run);
      fs.appendFileSync(p.file, JSON.stringify({ label: 'parent', run }) + '\\n');
      // A reward handed out shortly after the purchase commits.
      api.timers.after(1, 'edges.reward', { file: p.file, run });
      const account = await api.objects.fetch('ProbeAccount', p.id, 'write');
      if (run === 1) {
        // The first run's object changes meanwhile: its commit conflicts and it runs again.
        await api.objects.transact(async (tx) => {
          const same = await tx.fetch('ProbeAccount', p.id, 'write');
          same!.set('coins', same!.get('coins') + 100);
        });
      }
      account!.set('coins', account!.get('coins') + 1);
    });
    api.event<{ file: string; run: number }>('edges.reward', (p) => {
      fs.appendFileSync(p.file, JSON.stringify({ label: 'reward', run: p.run }) + '\\n');
    });
  },
});
`);
  return dir;
}

test.serial('sqlite: a timer started by an event that conflicted and ran again fires once, for the committed run', async (t) => {
  const s = await startObjectServer(await storeArgs('sqlite'), {}, [OBJECTS_PROBE, rerunTimerPlugin()]);
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'rerun-timer', coins: 0 }).id);
    const file = path.join(s.dir, 'rerun.jsonl');
    s.server.invoke('edges.parent', { id, file });
    await waitFor(() => readNotes<Note>(file).filter((n) => n.label === 'parent').length === 2, 20000, 'the rerun');
    await waitFor(() => readNotes<Note>(file).some((n) => n.label === 'reward' && n.run === 2), 20000, 'the committed run\'s reward');
    await idle();
    t.is((await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins'), 101);
    t.deepEqual(readNotes<Note>(file).filter((n) => n.label === 'reward').map((n) => n.run), [2]);
  } finally {
    await s.stop();
  }
});
}
