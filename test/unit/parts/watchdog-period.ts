/** How often the watchdog looks at running events (src/events/main/watchdog.ts `checkPeriodMs`). */
import test from 'ava';
import { checkPeriodMs } from '../../../src/events/main/watchdog.ts';

const base = { timeoutMs: 60_000, checker: true, hangThresholdMs: 60_000, hangReportIntervalMs: 60_000 };

test('the watchdog looks once per second unless a limit is shorter', (t) => {
  t.is(checkPeriodMs(base), 1000);
  t.is(checkPeriodMs({ ...base, timeoutMs: 400 }), 100);
  t.is(checkPeriodMs({ ...base, hangThresholdMs: 2000 }), 500);
  t.is(checkPeriodMs({ ...base, timeoutMs: 1 }), 10);
});

test('a hang line due every report interval is looked for twice per interval', (t) => {
  // A 2 s threshold alone would look every 500 ms, and a line due every 100 ms come every 500.
  t.is(checkPeriodMs({ ...base, hangThresholdMs: 2000, hangReportIntervalMs: 100 }), 50);
  t.is(checkPeriodMs({ ...base, hangReportIntervalMs: 1000 }), 500);
  // Without the checker no hang line is written, and the interval does not count.
  t.is(checkPeriodMs({ ...base, checker: false, hangThresholdMs: 2000, hangReportIntervalMs: 100 }), 1000);
});
