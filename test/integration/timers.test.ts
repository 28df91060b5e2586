import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { TIMER_TAG } from '../../src/index.ts';
import { startTestServer, waitFor } from './_server.ts';
import { startSessionServer } from './_session.ts';
import { PLUGIN as P, newPluginDir, post } from './_reload.ts';

test.serial('one-shot and repeating timers run as events on the timer tag; cancel stops them', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    const rt = s.server.thread.runtime;
    const started = Date.now();
    rt.addTimer(150, 0, 'probe.note', { file: s.notes, label: 'once' });
    const repeating = rt.addTimer(0, 40, 'probe.count', undefined);
    const rec = await waitFor(() => s.records().find((r) => r.label === 'once'), 5000);
    t.true(rec.start - started >= 140, `fired after ${rec.start - started} ms`);
    t.is(rec.tag, TIMER_TAG);
    t.is(rec.kind, 'timer');
    await waitFor(() => (native.counterReadInt('probe', 'count') ?? 0) >= 5, 5000, 'five ticks');
    t.true(native.timerCancel(repeating));
    t.false(native.timerCancel(repeating));
    // A tick already queued or running still counts; read once none is.
    await waitFor(() => native.queueStats().waiting === 0 && native.queueStats().outstanding === 0, 5000, 'an idle queue');
    const after = native.counterReadInt('probe', 'count');
    await new Promise((r) => setTimeout(r, 200));
    t.is(native.counterReadInt('probe', 'count'), after, 'no tick after cancel');
    t.throws(() => rt.addTimer(-1, 0, 'probe.count'), { message: 'timer delay must be a non-negative number of ms, got -1' });
  } finally {
    await s.stop();
  }
});

test.serial('timers declared by a plugin start once, not once per worker', async (t) => {
  const t0 = Date.now();
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 3 } }, ['probe', 'ticker']);
  const startup = Date.now() - t0;
  try {
    const read = (): number => native.counterReadInt('ticker', 'ticks') ?? 0;
    // Read well after the start, so that four copies (main + 3 workers) would exceed the bound below.
    await waitFor(() => read() >= 1 && Date.now() - t0 >= 2 * startup + 500, 20000, 'ticks');
    const ticks = read();
    const elapsed = Date.now() - t0;
    // Every 100 ms from a start after t0: at most elapsed / 100 however late the ticks run (one to spare).
    t.true(ticks >= 1 && ticks <= elapsed / 100 + 1, `ticks ${ticks} in ${elapsed} ms`);
    t.is(native.counterGet('ticker', 'ticks')?.description, 'Ticks of the ticker plugin');
  } finally {
    await s.stop();
  }
});

test.serial('a repeating timer slower than its period skips periods once 1000 timer events wait, counted and logged', async (t) => {
  const s = await startTestServer();
  try {
    const rt = s.server.thread.runtime;
    // Every 1 ms, 3 ms of work each: without the bound the timer tag would grow for good.
    const id = rt.addTimer(0, 1, 'probe.note', { file: '/dev/null', label: 'slow', sleepSyncMs: 3 });
    const skipped = await waitFor(() => {
      const v = native.counterValue('engine', 'timer_periods_skipped') ?? 0;
      return v > 0 ? v : undefined;
    }, 30000, 'a skipped period');
    t.true(skipped > 0);
    // The timer tag holds at most the bound (and what one firing added), whatever the timer's pace.
    t.true(native.queueStats().waiting <= 1001, `waiting ${native.queueStats().waiting}`);
    await waitFor(() => s.logs().find((l) => l.includes('period(s) of repeating timers skipped: 1000 timer events are waiting')), 5000, 'the warning');
    t.true(native.timerCancel(id));
  } finally {
    await s.stop();
  }
});

// Timers at the edges of a plugin's life: started once a stop began (they would never fire), and
// declared by one plugin on an event another plugin's reload removes.

const read = (name: string): number => native.counterReadInt(P, name) ?? 0;
const notStarted = (): number => native.counterReadInt('engine', 'timers_not_started_at_stop') ?? 0;

test.serial('a timer started once the stop began (an onStop hook, an event of the drain) is not started: 0 or no timer, a line and a counter', async (t) => {
  const dir = newPluginDir({
    version: '1.0.0', register: `
    api.event('save', () => {
      api.counters.increase('${P}', 'saved');
      api.counters.update('${P}', 'drain_timer_id', api.timers.after(0, 'save'));
    });
    api.onStop(() => {
      api.counters.update('${P}', 'stop_timer_id', api.timers.after(0, 'save'));
      api.invoke('save'); // a last save: it runs in the drain
    });`,
  });
  const before = notStarted();
  const s = await startSessionServer({ EventDispatcher: { shutdown_drain_timeout_in_ms: 5000 } }, [dir]);
  await s.stop();
  // The hook's timer is refused at once (0: no timer); the drain's event holds its timer until
  // its run ends, and then it is not started either: the save ran once, by the invoke.
  t.deepEqual({ saved: read('saved'), hook: read('stop_timer_id') }, { saved: 1, hook: 0 });
  t.true(read('drain_timer_id') > 0);
  t.is(notStarted() - before, 2);
  t.true(s.logs().some((l) => l.includes('stopping: 2 timer(s) started after the stop began (by onStop hooks or events of the drain) were not started')),
    s.logs().filter((l) => /timer/.test(l)).join('\n'));
});

/** A plugin folder `name` whose register runs `body`. */
function plainPlugin(name: string, version: string, body: string, dir?: string): string {
  const d = dir ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-timers-edges-')), name);
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, 'index.ts'), `import { definePlugin } from 'gsf';
export default definePlugin({ name: '${name}', version: '${version}', register(api) {
${body}
} });
`);
  return d;
}

test.serial('a reload that removes an event another plugin\'s declared timer fires is refused, as the start would be', async (t) => {
  const owner = plainPlugin('owner', '1.0.0', `  api.event('owner.tick', () => { api.counters.increase('owner', 'ticks'); });`);
  const user = plainPlugin('user', '1.0.0', `  api.timers.every(10, 'owner.tick');`);
  const s = await startSessionServer({}, [owner, user]);
  try {
    await waitFor(() => (native.counterReadInt('owner', 'ticks') ?? 0) >= 2, 10000, 'ticks');
    plainPlugin('owner', '2.0.0', `  api.event('owner.other', () => undefined);`, owner);
    const r = await post(s, '/v1/plugins/reload');
    t.is(r.status, 422, JSON.stringify(r.body));
    t.like(r.body, { error: 'GSF_ERR_RELOAD_FAILED', stage: 'register', plugins: ['owner'] });
    t.regex(String(r.body.message), /timer event 'owner\.tick': plugin 'user' declares a timer of it, and the new version no longer registers an event named 'owner\.tick'$/);
    // The old version keeps serving: its timer still fires its event.
    const ticks = native.counterReadInt('owner', 'ticks') ?? 0;
    await waitFor(() => (native.counterReadInt('owner', 'ticks') ?? 0) > ticks, 10000, 'ticks after the refusal');
    t.is(native.counterValue('engine', 'events_unknown') ?? 0, 0);
  } finally {
    await s.stop();
  }
});
