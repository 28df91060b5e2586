import test from 'ava';
import { AwaitCap } from '../../../src/events/worker/await-cap.ts';

/** A thread's conflicts and its cap: `window(reruns)` finishes 64 events that reran `reruns` times in all. */
function thread(max: number): { cap: AwaitCap; window(reruns: number, times?: number): number } {
  let conflicts = 100;
  const cap = new AwaitCap(max, conflicts);
  return {
    cap,
    window(reruns, times = 1) {
      for (let w = 0; w < times; w++) {
        conflicts += reruns;
        for (let i = 0; i < 64; i++) cap.finishedOne(conflicts);
      }
      return cap.value;
    },
  };
}

test('the awaiting cap halves while many events rerun, down to 8, holds in between, and grows back by an eighth', (t) => {
  const th = thread(1000);
  t.is(th.cap.value, 1000);
  t.is(th.window(0), 1000, 'no conflicts: the configured cap');
  t.is(th.window(64), 500, 'one rerun per event');
  t.is(th.window(17), 250, 'just over one in four');
  t.is(th.window(16), 250, 'one in four holds');
  t.is(th.window(7), 250, 'just over one in ten holds');
  t.is(th.window(64, 20), 8, 'never below 8');
  t.is(th.window(6), 9, 'under one in ten: an eighth more, at least one');
  t.is(th.window(0, 100), 1000, 'never above the configured cap');
});

test('a configured cap below 8 is its own floor', (t) => {
  const th = thread(4);
  t.is(th.window(64, 3), 4);
  t.is(th.window(0, 3), 4);
});
