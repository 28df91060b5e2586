import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, escapeLogText, groupLines } from '../../../src/log/logger.ts';

const flags = { get: (name: string): unknown => (name === 'alsologtostderr' ? false : 0) };

function logTo(format: 'text' | 'json') {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-log-')), 'out.log');
  return { log: createLogger(flags, { file, format }), read: () => fs.readFileSync(file, 'utf8') };
}

// Every character that could end a line or disguise one in a terminal or viewer.
const HOSTILE = 'a\nE20991231 00:00:00.000 main] FORGED\rb\tc\u0000d\u001b[2Je\u007ff\u0085g\u2028h\u2029i';

test('escapeLogText escapes C0, DEL, C1 and the Unicode separators, and leaves other text alone', (t) => {
  t.is(escapeLogText(HOSTILE),
    'a\\nE20991231 00:00:00.000 main] FORGED\\rb\\tc\\u0000d\\u001b[2Je\\u007ff\\u0085g\\u2028h\\u2029i');
  t.is(escapeLogText('plain text, ünïcödé 🎮 and a \\ backslash'), 'plain text, ünïcödé 🎮 and a \\ backslash');
});

test('text lines: a hostile message or field stays on its own line', (t) => {
  const { log, read } = logTo('text');
  log.warn(`player_id=${HOSTILE}`, { name: HOSTILE });
  log.info('next');
  const text = read();
  t.false(['\u2028', '\u2029', '\u0085', '\r', '\u0000'].some((c) => text.includes(c)));
  const lines = text.split('\n');
  t.is(lines.length, 3);
  t.is(lines[2], '');
  t.regex(lines[0]!, /^W\d{8} \d\d:\d\d:\d\d\.\d{3} main\] player_id=a\\nE20991231 00:00:00\.000 main\] FORGED\\rb\\tc\\u0000d\\u001b\[2Je\\u007ff\\u0085g\\u2028h\\u2029i /);
  // The fields stay JSON that parses back to the original value.
  const json = lines[0]!.slice(lines[0]!.indexOf(' {"name"') + 1);
  t.deepEqual(JSON.parse(json), { name: HOSTILE });
  t.regex(lines[1]!, /^I.* main\] next$/);
});

test('JSON lines: one record per line, the original text round-trips, fields cannot replace the record keys', (t) => {
  const { log, read } = logTo('json');
  log.error(HOSTILE, { level: 'INFO', msg: 'forged', thread: 'x', time: 'then', who: HOSTILE });
  log.info('next');
  const text = read();
  t.false(/[\u2028\u2029\r]/.test(text));
  const lines = text.split('\n');
  t.is(lines.length, 3);
  const record = JSON.parse(lines[0]!) as Record<string, unknown>;
  t.is(record.level, 'ERROR');
  t.is(record.msg, HOSTILE);
  t.is(record.thread, 'main');
  t.not(record.time, 'then');
  t.like(record, { field_level: 'INFO', field_msg: 'forged', field_thread: 'x', field_time: 'then', who: HOSTILE });
  t.is((JSON.parse(lines[1]!) as { msg: string }).msg, 'next');
});

test('fields that throw when read cost the fields, never the line or the caller, in both formats', (t) => {
  const getter = { get bad(): unknown { throw new Error('getter'); } };
  const toJson = { t: { toJSON(): unknown { throw new Error('tojson'); } } };
  const json = logTo('json');
  t.notThrows(() => json.log.warn('first', getter));
  json.log.warn('second', toJson);
  json.log.info('third', { ok: 1 });
  const records = json.read().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  t.deepEqual(records.map((r) => [r.level, r.msg, r.thread, r.fields_error, r.ok]), [
    ['WARNING', 'first', 'main', '[fields not written: getter]', undefined],
    ['WARNING', 'second', 'main', '[fields not written: tojson]', undefined],
    ['INFO', 'third', 'main', undefined, 1],
  ]);
  t.true(records.every((r) => typeof r.time === 'string' && !Number.isNaN(Date.parse(r.time))));
  const text = logTo('text');
  t.notThrows(() => text.log.warn('first', getter));
  text.log.warn('second', toJson);
  t.deepEqual(text.read().trim().split('\n').map((l) => l.slice(l.indexOf('] ') + 2)), [
    'first "[fields not written: getter]"',
    'second "[fields not written: tojson]"',
  ]);
});

test('groupLines writes a burst of lines together when it ends, whole and in order, even when it throws', (t) => {
  const { log, read } = logTo('text');
  const writes: number[] = [];
  const writeSync = fs.writeSync;
  (fs as { writeSync: unknown }).writeSync = (fd: number, text: string) => {
    writes.push(text.length);
    return writeSync(fd, text);
  };
  try {
    groupLines(() => {
      for (let i = 0; i < 100; i++) log.info(`line ${i} ${'x'.repeat(60)}`);
      // Only whole lines are out so far, and not the last ones: they wait for the group's end.
      const sofar = read();
      t.true(sofar.endsWith('\n') && !sofar.includes('line 99 '));
    });
    t.throws(() => groupLines(() => {
      log.info('before the throw');
      throw new Error('boom');
    }), { message: 'boom' });
    log.info('after');
  } finally {
    (fs as { writeSync: unknown }).writeSync = writeSync;
  }
  const lines = read().split('\n').filter(Boolean);
  t.deepEqual(lines.map((l) => l.slice(l.indexOf('] ') + 2).split(' ').slice(0, 2).join(' ')),
    [...Array.from({ length: 100 }, (_, i) => `line ${i}`), 'before the', 'after']);
  // 100 lines of about 100 bytes in writes under PIPE_BUF, then one write each for the rest.
  t.true(writes.length >= 3 && writes.length <= 6, `writes: ${writes.join(', ')}`);
  t.true(writes.every((n) => n <= 4096));
});

test('text lines carry the UTC time of the write, to the millisecond, across seconds', async (t) => {
  const { log, read } = logTo('text');
  const stamps: Array<[number, number]> = [];
  // Lines within one second and across the next: the cached part of the stamp must follow.
  const until = Date.now() + 1100;
  while (Date.now() < until) {
    const before = Date.now();
    log.info('tick');
    stamps.push([before, Date.now()]);
    await new Promise((r) => setTimeout(r, 7));
  }
  const lines = read().trim().split('\n');
  t.is(lines.length, stamps.length);
  const seconds = new Set<number>();
  lines.forEach((line, i) => {
    const m = /^I(\d{4})(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3}) main\] tick$/.exec(line);
    t.truthy(m, line);
    const [, y, mo, d, h, mi, s, ms] = m!.map(Number);
    const at = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!);
    t.true(at >= stamps[i]![0] && at <= stamps[i]![1], `${line}: written between ${stamps[i]![0]} and ${stamps[i]![1]}`);
    seconds.add(Math.floor(at / 1000));
  });
  t.true(seconds.size >= 2);
});
