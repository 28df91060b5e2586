/**
 * The decoded copies an event thread keeps (`ObjectStore.decoded_copies_per_thread`): a table of
 * a power of two slots by cache-entry stamp, which the native lookup reads to skip copying bytes
 * the thread holds decoded.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { encodeFields } from '../../src/objects/model.ts';
import { DecodedCopies, MAX_DECODED_COPIES } from '../../src/objects/decoded-copies.ts';

test('the size rounds up to a power of two; 0 keeps none', (t) => {
  t.is(new DecodedCopies(1).size, 1);
  t.is(new DecodedCopies(1000).size, 1024);
  t.is(new DecodedCopies(16384).size, 16384);
  t.is(new DecodedCopies(Number.MAX_SAFE_INTEGER).size, MAX_DECODED_COPIES);
  const none = new DecodedCopies(0);
  t.is(none.size, 0);
  t.is(none.stamps, null);
  none.set(5, { n: 5 });
  t.is(none.get(5), undefined);
});

test('a copy is found by its stamp until a newer stamp takes its slot', (t) => {
  const copies = new DecodedCopies(4);
  copies.set(5, { n: 5 });
  copies.set(6, { n: 6 });
  t.deepEqual(copies.get(5), { n: 5 });
  t.deepEqual(copies.get(6), { n: 6 });
  // Stamp 1 and 9 share slot 1 with 5: neither is held.
  t.is(copies.get(1), undefined);
  t.is(copies.get(9), undefined);
  copies.set(9, { n: 9 });
  t.is(copies.get(5), undefined);
  t.deepEqual(copies.get(9), { n: 9 });
  t.is(copies.stamps![9 % 4], 9);
  // Stamps past 2^32 take their slot by value, as the native side computes it.
  const big = 2 ** 40 + 3;
  copies.set(big, { n: 'big' });
  t.is(copies.stamps![3], big);
  t.deepEqual(copies.get(big), { n: 'big' });
});

test('stamps in sequence keep a scan of as many objects as there are slots', (t) => {
  const copies = new DecodedCopies(1000);
  for (let stamp = 1; stamp <= 1024; stamp++) copies.set(stamp, { stamp });
  for (let stamp = 1; stamp <= 1024; stamp++) t.is(copies.get(stamp)?.stamp, stamp);
  copies.set(1025, { stamp: 1025 });
  t.is(copies.get(1), undefined);
  t.is(copies.get(2)?.stamp, 2);
});

test('the native lookup copies no bytes the table holds, and copies them again for a new version', (t) => {
  const type = 30;
  native.objCachePut(type, 'held', 1, encodeFields({ coins: 1 }));
  // A thread that bound no arrays cannot look up with them.
  t.throws(() => native.objCacheLookup(type, 'held'), { message: /bound no arrays/ });
  const copies = new DecodedCopies(8);
  const buffer = new Uint8Array(64);
  const meta = new Float64Array(2);
  native.objCacheBind(buffer, meta, copies.stamps);
  const n = native.objCacheLookup(type, 'held');
  t.true(n > 0);
  t.is(meta[0], 1);
  const stamp = meta[1]!;
  t.true(stamp > 0);
  copies.set(stamp, { coins: 1 });
  buffer.fill(0);
  t.is(native.objCacheLookup(type, 'held'), -3);
  t.is(meta[1], stamp);
  t.is(buffer[0], 0);
  // Without the table the bytes come every time.
  native.objCacheBind(buffer, meta, null);
  t.is(native.objCacheLookup(type, 'held'), n);
  t.not(buffer[0], 0);
  native.objCacheBind(buffer, meta, copies.stamps);
  native.objCachePut(type, 'held', 2, encodeFields({ coins: 2 }));
  t.true(native.objCacheLookup(type, 'held') > 0);
  t.is(meta[0], 2);
  t.not(meta[1], stamp);
  t.is(native.objCacheLookup(type, 'missing'), -1);
  // The table must have a power of two slots; the arrays bound before stay bound.
  const bad = t.throws(() => native.objCacheBind(buffer, meta, new Float64Array(3)));
  t.regex(bad!.message, /power of two/);
  t.true(native.objCacheLookup(type, 'held') > 0);
});
