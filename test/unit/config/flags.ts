import test from 'ava';
import { FlagRegistry, flagText, invalidText, parseFlagText, parseFlagValue, setText } from '../../../src/config/flags.ts';
import { buildFlags } from '../../../src/config/flag-setup.ts';
import { emptyManifest } from '../../../src/config/manifest.ts';
import type { ArgSpec } from '../../../src/config/schema.ts';

const bool: ArgSpec = { type: 'bool', default: false, desc: 'b' };
const i32: ArgSpec = { type: 'int32', default: 0, desc: 'i' };
const u64: ArgSpec = { type: 'uint64', default: 4, desc: 'u', min: 1 };
const dbl: ArgSpec = { type: 'double', default: 0.5, desc: 'd' };
const str: ArgSpec = { type: 'string', default: '', desc: 's' };

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

test('numbers are decimal only, with nothing around them, in every numeric type', (t) => {
  for (const text of ['0x10', '0X10', ' 5', '5 ', '\t5', '5\n', '', '+', '1_000', 'Infinity', 'NaN', '0b1', '0o7']) {
    t.is(parseFlagText(i32, text), undefined, JSON.stringify(text));
    t.is(parseFlagText(u64, text), undefined, JSON.stringify(text));
    t.is(parseFlagText(dbl, text), undefined, JSON.stringify(text));
  }
  t.is(parseFlagText(i32, '007'), 7);
  t.is(parseFlagText(i32, '+7'), 7);
  t.true(Object.is(parseFlagText(i32, '-0'), 0));
  t.is(parseFlagText(dbl, '007.50'), 7.5);
  t.is(parseFlagText(dbl, '.5'), 0.5);
  t.is(parseFlagText(dbl, '5.'), 5);
  t.is(parseFlagText(dbl, '-2.5e-3'), -0.0025);
  t.is(parseFlagText(dbl, '1E3'), 1000);
  t.true(Object.is(parseFlagText(dbl, '-0.0e5'), 0));
  t.is(parseFlagText(dbl, '1e-310'), 1e-310, 'a subnormal double is not 0: kept');
});

test('doubles that overflow or underflow are refused, with why', (t) => {
  const over = { ok: false, problem: 'must be at most 1.7976931348623157e+308 in magnitude (the largest double)' };
  const under = { ok: false, problem: 'must be 0 or at least 5e-324 in magnitude (a double rounds anything smaller to 0)' };
  t.deepEqual(parseFlagValue(dbl, '1e400'), over);
  t.deepEqual(parseFlagValue(dbl, '-1e309'), over);
  t.deepEqual(parseFlagValue(dbl, '1e-400'), under);
  t.deepEqual(parseFlagValue(dbl, '-0.0001e-330'), under);
  t.deepEqual(parseFlagValue(dbl, '2e-324'), under);
  t.deepEqual(parseFlagValue(dbl, '0e-400'), { ok: true, value: 0 }, 'a zero is 0 at any exponent');
  t.deepEqual(parseFlagValue(dbl, '0.000e999'), { ok: true, value: 0 });
  t.deepEqual(parseFlagValue(dbl, '1.7976931348623157e308'), { ok: true, value: Number.MAX_VALUE });
  t.deepEqual(parseFlagValue(dbl, '0x10'), { ok: false, problem: null });
});

test('strings: taken as sent, empty included; NUL and white space at either end are refused', (t) => {
  t.deepEqual(parseFlagValue(str, ''), { ok: true, value: '' });
  t.deepEqual(parseFlagValue(str, 'Double XP weekend'), { ok: true, value: 'Double XP weekend' });
  t.deepEqual(parseFlagValue(str, '007'), { ok: true, value: '007' });
  for (const text of ['a\0b', '\0', 'x\0']) t.deepEqual(parseFlagValue(str, text), { ok: false, problem: 'must not hold a NUL character' });
  for (const text of [' ', ' a', 'a ', '\t', 'a\n', '\u00a0a', 'a\u3000']) {
    t.deepEqual(parseFlagValue(str, text), { ok: false, problem: 'must not start or end with white space' }, JSON.stringify(text));
  }
});

test('the answers: the value stored, as GET shows it, and the refusal with why', (t) => {
  t.is(setText('v', parseFlagText(i32, '007')!), 'v set to 7');
  t.is(setText('b', parseFlagText(bool, '-3')!), 'b set to true');
  t.is(setText('r', parseFlagText(dbl, '2.50e1')!), 'r set to 25');
  t.is(setText('s', ''), 's set to ');
  t.is(invalidText('v', 'loud', null), 'loud is not a valid value for v');
  t.is(invalidText('v', '-1', 'must be an integer >= 0'), '-1 is not a valid value for v: v must be an integer >= 0');
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
