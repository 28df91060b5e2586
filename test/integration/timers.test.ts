import test from 'ava';
import { native } from '../../src/native.ts';
import { TIMER_TAG } from '../../src/index.ts';
import { startTestServer, waitFor } from './_server.ts';

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
