import test from 'ava';
import { decodePayload, encodePayload } from '../../../src/events/codec.ts';
import { decodeFieldsIn, encodeFields } from '../../../src/objects/model.ts';

test('event payloads decode to what was encoded, at any offset of a claim buffer', (t) => {
  const payloads: unknown[] = [
    0, -7, 2 ** 40, 1.5, 'x', '', 'ünï ☃', true, null, [1, 'a', null],
    { method: 'GET', path: '/cs-api/v1/account/player7/', params: { id: 'player7' }, query: {}, body: null },
    { names: ['a'.repeat(20), 'b'.repeat(40)], long: 'c'.repeat(200), nested: { deep: ['d'.repeat(130)] } },
    new Date(1_700_000_000_000), new Set(['s', 't']),
    { blob: new Uint8Array([1, 2, 3]), big: new Uint8Array(300).fill(9) },
  ];
  for (const payload of payloads) {
    const bytes = encodePayload(payload)!;
    // Near the start of the buffer, and far into it (msgpackr reads strings differently past 140 bytes).
    for (const offset of [0, 3, 137, 4000]) {
      const claim = new Uint8Array(offset + bytes.length + 16).fill(0xc1);
      claim.set(bytes, offset);
      const value = decodePayload(claim, offset, bytes.length);
      t.deepEqual(value, payload, `${JSON.stringify(payload, (_k, v) => (v instanceof Set ? [...v] : v))?.slice(0, 60)} at ${offset}`);
      // Binary values are copies: the next claim overwrites the buffer.
      if (payload !== null && typeof payload === 'object' && 'blob' in payload) {
        claim.fill(0);
        t.deepEqual((value as { blob: Uint8Array }).blob, new Uint8Array([1, 2, 3]));
      }
    }
  }
  t.is(encodePayload(undefined), null);
  t.is(decodePayload(new Uint8Array(8), 4, 0), undefined);
  // A value that ends before its range does is refused, as before.
  const two = new Uint8Array([0x01, 0x02]);
  t.throws(() => decodePayload(two, 0, 2));
});

test('stored object fields decode from the first bytes of a reused buffer, whatever it held before', (t) => {
  const buffer = new Uint8Array(4096).fill(0xc1);
  const objects = [
    { name: 'player1', score: 7, tags: ['a', 'b'], joined: new Date(1_700_000_000_000) },
    { name: 'x'.repeat(300), bio: 'ünï ☃'.repeat(40), items: Array.from({ length: 30 }, (_, i) => ({ id: i, label: `item-${i}` })) },
    { name: 'p', score: -1 },
  ];
  for (const fields of objects) {
    const bytes = encodeFields(fields);
    buffer.set(bytes, 0);
    t.deepEqual(decodeFieldsIn(buffer, bytes.length), fields);
  }
});

test('what a payload becomes on the other thread: Maps arrive as plain objects, Sets and Dates as themselves', (t) => {
  const round = (v: unknown): unknown => {
    const b = encodePayload(v)!;
    return decodePayload(b, 0, b.length);
  };
  t.deepEqual(round(new Map<unknown, unknown>([['a', 1], [2, 'x']])), { a: 1, 2: 'x' });
  t.deepEqual(round(new Set([1, 'b'])), new Set([1, 'b']));
  t.deepEqual(round(new Date(5)), new Date(5));
  t.deepEqual(round({ bin: Uint8Array.of(7) }), { bin: Uint8Array.of(7) });
});

test('values in buffers the decoder has not seen (a native call hands over new ones) decode from a copy, one after the other', (t) => {
  const values: unknown[] = [
    { score: 1 },
    { name: 'p'.repeat(200), inventory: { potion: 3 }, clicks_by_day: { '2026-11-27': 99 } },
    'x'.repeat(5000),
    { big: 'y'.repeat(70 * 1024) },
  ];
  for (let round = 0; round < 3; round++) {
    for (const value of values) {
      const bytes = encodePayload(value)!;
      const fresh = Buffer.from(bytes);
      t.deepEqual(decodePayload(fresh, 0, fresh.length), value);
      // At an offset of a fresh buffer, with bytes before and after the value.
      const padded = Buffer.concat([Buffer.from([0xc0, 0xc0]), bytes, Buffer.from([0xc0])]);
      t.deepEqual(decodePayload(padded, 2, bytes.length), value);
      t.deepEqual(decodeFieldsIn(Buffer.from(bytes), bytes.length), value);
    }
  }
  // A later, shorter value in the same copy reads none of the longer one's bytes.
  const long = encodePayload({ a: 'z'.repeat(3000) })!;
  const short = encodePayload({ a: 1 })!;
  t.deepEqual(decodePayload(Buffer.from(long), 0, long.length), { a: 'z'.repeat(3000) });
  t.deepEqual(decodePayload(Buffer.from(short), 0, short.length), { a: 1 });
  t.throws(() => decodePayload(Buffer.from(long), 0, long.length - 1));
});
