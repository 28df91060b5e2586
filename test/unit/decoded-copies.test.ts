/**
 * The decoded copies an event thread keeps per object type (`ObjectStore.decoded_copies_per_type`):
 * two generations, so a full young generation makes the old one go whole and no entry is ever
 * deleted one by one; a copy is found in either generation until then.
 */
import test from 'ava';
import { DecodedCopies, type Decoded } from '../../src/objects/thread-store.ts';

const copy = (stamp: number): Decoded => ({ stamp, fields: { n: stamp } });

test('a copy stays findable for one more generation, then goes with its generation', (t) => {
  const memo = new DecodedCopies(2);
  memo.set('a', copy(1));
  memo.set('b', copy(2));
  // The young generation is full: it becomes the old one, and 'c' starts the next.
  memo.set('c', copy(3));
  t.deepEqual(['a', 'b', 'c'].map((id) => memo.get(id)?.stamp), [1, 2, 3]);
  memo.set('d', copy(4));
  t.deepEqual(['a', 'b', 'c', 'd'].map((id) => memo.get(id)?.stamp), [1, 2, 3, 4]);
  // Full again: 'a' and 'b' go, 'c' and 'd' are the old generation now.
  memo.set('e', copy(5));
  t.deepEqual(['a', 'b', 'c', 'd', 'e'].map((id) => memo.get(id)?.stamp), [undefined, undefined, 3, 4, 5]);
});

test('the same object set again is one entry, the newest copy', (t) => {
  const memo = new DecodedCopies(4);
  memo.set('a', copy(1));
  memo.set('a', copy(7));
  t.is(memo.get('a')?.stamp, 7);
  t.is(memo.get('a')?.fields.n, 7);
  t.is(memo.get('missing'), undefined);
});

test('a scan of more objects than one generation holds keeps the last ones of it', (t) => {
  const memo = new DecodedCopies(1000);
  for (let i = 0; i < 10_000; i++) memo.set(`o${i}`, copy(i + 1));
  // The last full generation (o8000..o8999) and the young one (o9000..o9999) remain.
  t.is(memo.get('o7999'), undefined);
  t.is(memo.get('o8000')?.stamp, 8001);
  t.is(memo.get('o9999')?.stamp, 10_000);
});
