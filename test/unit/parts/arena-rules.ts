import test from 'ava';
import { isoTime } from '../../../plugins/arena/rules.ts';

test('isoTime writes what toISOString writes, for every field width and outside 1000-9999 too', (t) => {
  const times = [
    0, 1, 9, 10, 99, 100, 999, Date.UTC(2026, 0, 1), Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2024, 1, 29, 4, 5, 6, 7), Date.UTC(1000, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), -1, -62198755200000, 8.64e15, -8.64e15,
  ];
  for (let i = 0; i < 2000; i++) times.push(Math.floor(Date.UTC(1970, 0, 1) + i * 1_234_567_891.3));
  for (const ms of times) t.is(isoTime(new Date(ms)), new Date(ms).toISOString(), `time ${ms}`);
});

test('isoTime of an invalid date throws as toISOString does', (t) => {
  t.throws(() => isoTime(new Date(NaN)), { instanceOf: RangeError });
});
