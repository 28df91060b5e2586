import test from 'ava';
import { native, COMPLETE_STRIDE, EventKind, PUSH_STRIDE, PushField, TAKE_STRIDE, TakeField } from '../../src/native.ts';

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
  // Tags live in run queues of their own; a claim holds whole runs of tags from every run queue
  // with room, so both tags come in one claim (the loop allows for more).
  const got: Array<{ id: number; tag: number; text: string; name: number; handler: number; session: number; kind: number; claim: number }> = [];
  for (let claim = 0; claim < 3 && got.length < 3; claim++) {
    const n = native.take(slot, meta, out, 8);
    const row = (i: number, f: number): number => meta[i * TAKE_STRIDE + f]!;
    for (let i = 0; i < n; i++) {
      const start = row(i, TakeField.payloadOffset);
      got.push({
        id: row(i, TakeField.id), tag: row(i, TakeField.tag), name: row(i, TakeField.nameId), handler: row(i, TakeField.handlerId),
        session: row(i, TakeField.sessionId), kind: row(i, TakeField.kind), claim,
        text: Buffer.from(out.subarray(start, start + row(i, TakeField.payloadLength))).toString(),
      });
    }
    native.complete(slot, n, new Float64Array(Math.max(1, n) * COMPLETE_STRIDE));
  }
  t.is(got.length, 3);
  // tagA's two events are claimed together, in push order, with consecutive ids from `first`.
  const a = got.filter((e) => e.tag === tagA);
  const b = got.filter((e) => e.tag === tagB);
  t.deepEqual(a.map((e) => [e.id, e.text, e.name, e.handler, e.session, e.kind]), [
    [first, 'hello', 5, 6, tagA, EventKind.network],
    [first + 2, 'XYZ', 9, 6, tagA, EventKind.network],
  ]);
  t.is(a[0]!.claim, a[1]!.claim);
  t.deepEqual(b.map((e) => [e.id, e.text, e.name, e.handler, e.session, e.kind]), [[first + 1, '', 7, 8, 0, EventKind.user]]);
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

test.serial('reserveEventId(count) reserves consecutive ids that pushBatch gives its events in order', (t) => {
  const slot = native.slotRegister(9002);
  const first = native.reserveEventId(10);
  t.is(native.reserveEventId(), first + 10);
  const tag = 2 ** 40 + 6;
  t.is(native.pushBatch(records([[tag, 1, 1, 0, EventKind.user, 0], [tag, 2, 1, 0, EventKind.user, 0]]), 2, new Uint8Array(0), first + 3), first + 3);
  const meta = new Float64Array(8 * TAKE_STRIDE);
  t.is(native.take(slot, meta, new Uint8Array(16), 8), 2);
  t.deepEqual([meta[TakeField.id], meta[TAKE_STRIDE + TakeField.id]], [first + 3, first + 4]);
  native.complete(slot, 2, new Float64Array(2 * COMPLETE_STRIDE));
  for (const bad of [-1, 1.5, 2 ** 53]) {
    t.throws(() => native.pushBatch(records([[tag, 1, 1, 0, 0, 0]]), 1, new Uint8Array(0), bad), { instanceOf: RangeError }, String(bad));
  }
  for (const bad of [0, 1.5, 2 ** 21]) t.throws(() => native.reserveEventId(bad), { instanceOf: RangeError }, String(bad));
  t.is(native.waiting(), 0);
});
