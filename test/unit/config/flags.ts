import test from 'ava';
import { FlagRegistry, parseFlagText, flagText } from '../../../src/config/flags.ts';
import { buildFlags } from '../../../src/config/flag-setup.ts';
import { emptyManifest } from '../../../src/config/manifest.ts';
import type { ArgSpec } from '../../../src/config/schema.ts';

const bool: ArgSpec = { type: 'bool', default: false, desc: 'b' };
const i32: ArgSpec = { type: 'int32', default: 0, desc: 'i' };
const u64: ArgSpec = { type: 'uint64', default: 4, desc: 'u', min: 1 };

test('bool flags accept true/false and numbers (non-zero is true)', (t) => {
  t.is(parseFlagText(bool, 'true'), true);
  t.is(parseFlagText(bool, 'false'), false);
  t.is(parseFlagText(bool, '1'), true);
  t.is(parseFlagText(bool, '-3'), true);
  t.is(parseFlagText(bool, '0'), false);
  t.is(parseFlagText(bool, 'yes'), undefined);
  t.is(parseFlagText(bool, ''), undefined);
});

test('integer flags check syntax and range', (t) => {
  t.is(parseFlagText(i32, '-5'), -5);
  t.is(parseFlagText(i32, '2147483648'), undefined);
  t.is(parseFlagText(i32, '1.5'), undefined);
  t.is(parseFlagText(u64, '0'), undefined);
  t.is(parseFlagText(u64, '8'), 8);
  t.is(parseFlagText(u64, 'eight'), undefined);
});

test('registry: set from text, immutability, listeners, snapshot', (t) => {
  const flags = new FlagRegistry();
  flags.define('a', i32, 1, true);
  flags.define('b', bool, false, false);
  const seen: Array<[string, unknown, unknown]> = [];
  flags.onChange('*', (n, v, p) => seen.push([n, v, p]));
  t.deepEqual(flags.setFromText('a', '7'), { ok: true, value: 7 });
  t.deepEqual(flags.setFromText('a', 'x'), { ok: false, reason: 'invalid', problem: null });
  t.deepEqual(flags.setFromText('b', 'true'), { ok: false, reason: 'immutable' });
  t.deepEqual(flags.setFromText('zzz', '1'), { ok: false, reason: 'unknown' });
  t.is(flags.get('a'), 7);
  t.deepEqual(seen, [['a', 7, 1]]);
  t.deepEqual(flags.snapshot(), { a: 7, b: false });
  t.deepEqual(flags.listMutable().map((f) => f.name), ['a']);
  t.throws(() => flags.define('a', i32, 1, true), { message: "flag 'a' is already defined" });
  t.throws(() => flags.set('a', 1.5), { message: 'flag a must be a 32-bit integer' });
  t.is(flagText(true), 'true');
  t.is(flagText(['1.0', '1.1']), '["1.0","1.1"]');
});

test('built-in flags: the mutable set of SPEC 2.3 and typed values from the manifest', (t) => {
  const flags = buildFlags(emptyManifest().components);
  t.deepEqual(flags.listMutable().map((f) => f.name), [
    'alsologtostderr', 'client_current_version', 'enable_event_profiler', 'event_threads_size', 'minloglevel',
    'rpc_message_logging_level', 'session_message_logging_level', 'v',
  ]);
  t.is(flags.info('event_threads_size')!.type, 'uint64');
  t.is(flags.info('minloglevel')!.type, 'int32');
  t.is(flags.get('event_timeout_in_ms'), 30000);
  t.false(flags.info('event_timeout_in_ms')!.mutable);
});
