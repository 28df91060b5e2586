import test from 'ava';
import { encodePayload, decodePayload } from '../../../src/events/codec.ts';
import { NOT_PLAIN, NO_ROOM, packPlain } from '../../../src/events/plain-pack.ts';

/** The fast path's bytes for `value`, or its code. */
function fast(value: unknown, room = 1 << 16, at = 0): Uint8Array | number {
  const out = new Uint8Array(room);
  const end = packPlain(value, out, at);
  return end < 0 ? end : out.slice(at, end);
}

const hex = (b: Uint8Array | number | null): string => (typeof b === 'number' ? `code ${b}` : Buffer.from(b ?? []).toString('hex'));

/** Values at every boundary of every format the fast path writes. */
const corpus: unknown[] = [
  null, true, false,
  0, 1, 0x1f, 0x20, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffffff, 2 ** 32, 2 ** 53 - 1, 10_000_000_000,
  -1, -0x20, -0x21, -0x80, -0x81, -0x8000, -0x8001, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 53),
  -0, 0.5, -1.25, 3.141592653589793, 1e300, -1e-300, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity,
  '', 'a', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(65535), 'x'.repeat(65536),
  'é', 'ü'.repeat(15), 'ü'.repeat(16), 'ü'.repeat(63), '€', '€'.repeat(10), '€'.repeat(11), '😀', '😀'.repeat(15),
  '\ud800', 'a\udc00b', '\ud83d', 'mixed ascii then é', 'é'.repeat(30) + 'abc',
  [], [1, 2, 3], Array.from({ length: 15 }, (_, i) => i), Array.from({ length: 16 }, (_, i) => i), Array.from({ length: 70000 }, () => 1),
  {}, { a: 1 }, { player: 'p-1024', x: 12, y: -3, action: 'move' }, { '1': 'one', b: [{ c: null }], d: { e: { f: 'g' } } },
  Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i * 1.5])),
  { nested: [[[[]]]], flag: true, text: 'héllo wörld', big: 2 ** 40, neg: -123456 },
];

test('writes what Packr writes for plain data at every format boundary', (t) => {
  for (const value of corpus) {
    const got = fast(value, 1 << 20);
    t.is(hex(got), hex(encodePayload(value)), `value ${JSON.stringify(value)?.slice(0, 60)}`);
  }
});

test('writes what Packr writes for random plain values, and they decode to the same value', (t) => {
  let seed = 12345;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const chars = ['a', 'Z', '0', ' ', 'é', '€', '😀', '\ud800', '~', '\u0000'];
  const gen = (depth: number): unknown => {
    const k = Math.floor(rnd() * (depth > 3 ? 5 : 7));
    switch (k) {
      case 0: return rnd() < 0.5 ? null : rnd() < 0.5;
      case 1: return Math.floor((rnd() - 0.5) * 2 ** Math.floor(rnd() * 54));
      case 2: return (rnd() - 0.5) * 10 ** Math.floor(rnd() * 20);
      case 3:
      case 4: return Array.from({ length: Math.floor(rnd() * 70) }, () => chars[Math.floor(rnd() * chars.length)]).join('');
      case 5: return Array.from({ length: Math.floor(rnd() * 20) }, () => gen(depth + 1));
      default: return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 20) }, (_, i) => [`f${i}${chars[i % 3]}`, gen(depth + 1)]));
    }
  };
  let handled = 0;
  for (let i = 0; i < 3000; i++) {
    const value = gen(0);
    const got = fast(value);
    if (got === NOT_PLAIN) continue; // a long string with non-ASCII text somewhere: Packr's
    handled++;
    t.is(hex(got), hex(encodePayload(value)));
    const bytes = got as Uint8Array, ref = encodePayload(value)!;
    t.deepEqual(decodePayload(bytes, 0, bytes.length), decodePayload(ref, 0, ref.length));
  }
  t.true(handled > 1500, `the fast path took ${handled} of 3000`);
});

test('declines what is not plain data, so Packr encodes it', (t) => {
  class Point { constructor(readonly x: number) {} }
  const declined: unknown[] = [
    undefined, { a: undefined }, [1, undefined], new Date(0), new Map([[1, 2]]), new Set([1]), new Uint8Array(2),
    Buffer.from('ab'), 10n, { big: 1n }, new Point(1), Object.create(null), () => 1, Symbol('s'),
    'é'.repeat(64), { text: 'x'.repeat(70) + 'é' }, { hasOwnProperty: () => true, a: 1 },
  ];
  declined.forEach((value, i) => t.is(fast(value), NOT_PLAIN, `declined[${i}]`));
  let deep: unknown = 1;
  for (let i = 0; i < 40; i++) deep = [deep];
  t.is(fast(deep), NOT_PLAIN, 'nested deeper than the fast path goes');
});

test('says when the payload does not fit in the room left, at any offset', (t) => {
  const value = { player: 'p-1024', x: 12, y: -3, action: 'move' };
  const size = (fast(value) as Uint8Array).length;
  // Below some room it does not fit; from there on, it writes Packr's bytes. Strings ask for
  // three bytes per unit before they write, so that room is a little more than the size.
  let fits = -1;
  for (let room = 0; room < size + 40; room++) {
    const got = fast(value, 100 + room, 100);
    if (fits < 0 && got !== NO_ROOM) fits = room;
    if (fits < 0) continue;
    t.is(hex(got), hex(encodePayload(value)), `room ${room}`);
  }
  t.true(fits >= size && fits <= size + 3 * 'p-1024'.length, `fits from ${fits} bytes, size ${size}`);
  t.is(fast('x'.repeat(10), 10), NO_ROOM);
});
