import test from 'ava';
import { createLineLimiter } from '../../../src/log/rate-limit.ts';

function setup(perKeyPerSecond = 3, maxKeys?: number) {
  let ms = 1_000_000;
  const lines: string[] = [];
  const log = { warn: (m: string) => lines.push(`W ${m}`), error: (m: string) => lines.push(`E ${m}`) };
  const limiter = createLineLimiter({ perKeyPerSecond, log, now: () => ms, timer: false, maxKeys });
  return { limiter, lines, advance: (d: number) => { ms += d; } };
}

const summary = (n: number, key: string, level = 'W', limit = 3): string =>
  `${level} suppressed ${n} more line(s) of '${key}' in one second (at most ${limit} per second are written)`;

test('the first N lines of a key in a second are written exactly, then one summary with the count', (t) => {
  const { limiter, lines, advance } = setup();
  for (let i = 0; i < 10; i++) limiter.warn('slow:a', `Slow event: event_name=a, event_id=${i}, execution_time=500`);
  t.deepEqual(lines, [0, 1, 2].map((i) => `W Slow event: event_name=a, event_id=${i}, execution_time=500`));
  limiter.flush(); // the second is not over yet
  t.is(lines.length, 3);
  advance(1000);
  limiter.flush();
  t.deepEqual(lines.slice(3), [summary(7, 'slow:a')]);
  limiter.flush();
  t.is(lines.length, 4, 'one summary per key and second');
});

test('keys are limited apart; a new second starts a fresh allowance after the last summary', (t) => {
  const { limiter, lines, advance } = setup(2);
  for (let i = 0; i < 4; i++) {
    limiter.warn('a', `a${i}`);
    limiter.error('b', `b${i}`);
  }
  t.deepEqual(lines, ['W a0', 'E b0', 'W a1', 'E b1']);
  advance(1000);
  limiter.warn('a', 'a-next');
  // The summary of the finished second comes before the key's next line.
  t.deepEqual(lines.slice(4), [summary(2, 'a', 'W', 2), 'W a-next']);
  limiter.flush();
  t.deepEqual(lines.slice(6), [summary(2, 'b', 'E', 2)]);
});

test('a summary takes the highest level it stands for; nothing is summarized when nothing was left out', (t) => {
  const { limiter, lines, advance } = setup(1);
  limiter.warn('k', 'first');
  limiter.warn('k', 'second');
  limiter.error('k', 'third');
  limiter.warn('quiet', 'only');
  advance(1500);
  limiter.flush();
  t.deepEqual(lines, ['W first', 'W only', summary(2, 'k', 'E', 1)]);
});

test('seconds are whole clock seconds, not sliding windows', (t) => {
  const { limiter, lines, advance } = setup(1);
  advance(999); // 1,000,999 ms: the last millisecond of a second
  limiter.warn('k', 'one');
  limiter.warn('k', 'dropped');
  advance(1); // the next second
  limiter.warn('k', 'two');
  t.deepEqual(lines, ['W one', summary(1, 'k', 'W', 1), 'W two']);
});

test('past maxKeys new keys share one allowance; close writes what is pending', (t) => {
  const { limiter, lines } = setup(1, 2);
  limiter.warn('a', 'a');
  limiter.warn('b', 'b');
  limiter.warn('c', 'c');
  limiter.warn('d', 'd');
  t.deepEqual(lines, ['W a', 'W b', 'W c']);
  limiter.close();
  t.deepEqual(lines.slice(3), [summary(1, '*', 'W', 1)]);
  t.throws(() => createLineLimiter({ perKeyPerSecond: 0, log: { warn() {}, error() {} } }), { message: 'perKeyPerSecond must be a positive integer' });
});
