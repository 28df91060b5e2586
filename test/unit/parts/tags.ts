import test from 'ava';
import { NULL_TAG, namedTag, randomTag, resolveTag } from '../../../src/events/tags.ts';

const on = { enable_inheriting_event_tag: true, enable_random_event_tag: true };
const isRandom = (tag: number): boolean => Number.isSafeInteger(tag) && tag >= 2 ** 32 && tag < 2 ** 53;

test('random tags are safe integers in the random range and do not repeat', (t) => {
  const seen = new Set<number>();
  for (let i = 0; i < 20000; i++) {
    const tag = randomTag();
    t.true(isRandom(tag));
    seen.add(tag);
  }
  t.is(seen.size, 20000);
});

test('named tags are stable and distinct', (t) => {
  t.is(namedTag('lobby'), namedTag('lobby'));
  t.not(namedTag('lobby'), namedTag('lobby2'));
  t.true(isRandom(namedTag('lobby')));
});

test('inside an event the tag is inherited', (t) => {
  t.is(resolveTag({ tag: 12345678901, kind: 'user' }, on), 12345678901);
  t.is(resolveTag({ tag: 99, kind: 'network' }, on), 99);
  t.is(resolveTag({ tag: 98, kind: 'engine' }, on), 98);
});

test('timer and API-service handlers give derived events random tags', (t) => {
  const a = resolveTag({ tag: 1, kind: 'timer' }, on);
  const b = resolveTag({ tag: 1, kind: 'timer' }, on);
  t.true(isRandom(a));
  t.not(a, b);
  t.true(isRandom(resolveTag({ tag: 555, kind: 'api' }, on)));
});

test('outside any event a random tag', (t) => {
  t.true(isRandom(resolveTag(null, on)));
});

test('switches: inheriting off gives random tags, random off too gives the null tag', (t) => {
  const noInherit = { enable_inheriting_event_tag: false, enable_random_event_tag: true };
  const neither = { enable_inheriting_event_tag: false, enable_random_event_tag: false };
  t.true(isRandom(resolveTag({ tag: 77, kind: 'user' }, noInherit)));
  t.is(resolveTag({ tag: 77, kind: 'user' }, neither), NULL_TAG);
  t.is(resolveTag(null, neither), NULL_TAG);
  // Random tags off only matters when inheriting is off.
  t.is(resolveTag({ tag: 77, kind: 'user' }, { enable_inheriting_event_tag: true, enable_random_event_tag: false }), 77);
});
