import test from 'ava';
import { native, EventKind, PUSH_STRIDE, PushField, TAKE_STRIDE, TakeField } from '../../src/native.ts';

// The queue is process-global: ava runs this file in its own process, and the tests run one at a time.
test.serial.afterEach(() => native.queueReset());

function records(rows: number[][]): Float64Array {
  const r = new Float64Array(rows.length * PUSH_STRIDE);
  rows.forEach((row, i) => r.set(row, i * PUSH_STRIDE));
  return r;
}

test.serial('pushBatch queues events in order with consecutive ids and their payloads', (t) => {
  const slot = native.slotRegister(9001);
  const tagA = 2 ** 40 + 2;
  const tagB = 2 ** 40 + 4;
  const bytes = new Uint8Array(Buffer.from('helloXYZ'));
  const recs = records([
    [tagA, 5, 6, tagA, EventKind.network, 5],
    [tagB, 7, 8, 0, EventKind.user, 0],
    [tagA, 9, 6, tagA, EventKind.network, 3],
  ]);
  t.is(PushField.payloadLength, 5);
  const first = native.pushBatch(recs, 3, bytes);
  t.true(first >= 1);
  t.is(native.waiting(), 3);
  const meta = new Float64Array(8 * TAKE_STRIDE);
  const out = new Uint8Array(64);
  t.is(native.take(slot, meta, out, 8), 3);
  const row = (i: number, f: number): number => meta[i * TAKE_STRIDE + f]!;
  const text = (i: number): string => Buffer.from(out.subarray(row(i, TakeField.payloadOffset), row(i, TakeField.payloadOffset) + row(i, TakeField.payloadLength))).toString();
  // tagA's two events are claimed together, in push order, then tagB's.
  t.deepEqual([row(0, TakeField.id), row(1, TakeField.id), row(2, TakeField.id)], [first, first + 2, first + 1]);
  t.deepEqual([text(0), text(1), text(2)], ['hello', 'XYZ', '']);
  t.deepEqual([row(0, TakeField.nameId), row(0, TakeField.handlerId), row(0, TakeField.sessionId), row(0, TakeField.kind)], [5, 6, tagA, EventKind.network]);
  t.is(row(2, TakeField.tag), tagB);
  t.is(row(2, TakeField.kind), EventKind.user);
});

test.serial('pushBatch of nothing queues nothing and returns 0', (t) => {
  t.is(native.pushBatch(new Float64Array(0), 0, new Uint8Array(0)), 0);
  t.is(native.waiting(), 0);
});

test.serial('pushBatch refuses bad records with GSF_ERR_NATIVE_ARGUMENT and queues none of them', (t) => {
  const bytes = new Uint8Array(4);
  const cases: Array<[string, () => number, RegExp]> = [
    ['count past the records', () => native.pushBatch(records([[2 ** 33, 1, 1, 0, 0, 0]]), 2, bytes), /PUSH_STRIDE/],
    ['payloads past the bytes', () => native.pushBatch(records([[2 ** 33, 1, 1, 0, 0, 3], [2 ** 33, 1, 1, 0, 0, 3]]), 2, bytes), /exceed bytes/],
    ['negative tag', () => native.pushBatch(records([[-1, 1, 1, 0, 0, 0]]), 1, bytes), /out of range/],
    ['fractional name id', () => native.pushBatch(records([[2 ** 33, 1.5, 1, 0, 0, 0]]), 1, bytes), /out of range/],
    ['kind above 255', () => native.pushBatch(records([[2 ** 33, 1, 1, 0, 256, 0]]), 1, bytes), /out of range/],
    ['NaN session id', () => native.pushBatch(records([[2 ** 33, 1, 1, NaN, 0, 0]]), 1, bytes), /out of range/],
  ];
  for (const [what, call, message] of cases) {
    const err = t.throws(call, { instanceOf: RangeError, message }, what);
    t.is((err as Error & { code?: string }).code, 'GSF_ERR_NATIVE_ARGUMENT', what);
  }
  t.is(native.waiting(), 0);
});
