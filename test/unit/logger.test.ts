import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, escapeLogText } from '../../src/log/logger.ts';

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
