import test from 'ava';
import { native, COMPLETE_STRIDE, TAKE_STRIDE, TakeField } from '../../src/native.ts';
import { InvokeStage, invokeStage } from '../../src/events/main/invoke-stage.ts';
import { decodePayload, encodePayload } from '../../src/events/codec.ts';

// The queue is process-global: ava runs this file in its own process, and the tests run one at a time.
test.serial.afterEach(() => native.queueReset());

/** Claims everything queued on `slot`: [id, tag, payload text] in claim order. */
function drain(slot: number, room = 1 << 16): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  const meta = new Float64Array(4096 * TAKE_STRIDE);
  const bytes = new Uint8Array(room);
  for (;;) {
    const n = native.take(slot, meta, bytes, 4096);
    if (n <= 0) return out;
    for (let i = 0; i < n; i++) {
      const m = (f: number): number => meta[i * TAKE_STRIDE + f]!;
      const text = Buffer.from(bytes.subarray(m(TakeField.payloadOffset), m(TakeField.payloadOffset) + m(TakeField.payloadLength))).toString();
      out.push([m(TakeField.id), m(TakeField.tag), text]);
    }
    native.complete(slot, n, new Float64Array(n * COMPLETE_STRIDE));
  }
}

test.serial('staged events enter the queue at the end of the turn, with the ids add returned, in order per tag', async (t) => {
  const slot = native.slotRegister(9101);
  const stage = new InvokeStage();
  const tags = [2 ** 40 + 10, 2 ** 40 + 12];
  const ids = Array.from({ length: 6 }, (_, i) => stage.add(tags[i % 2]!, 1, 1, 0, 0, new Uint8Array(Buffer.from(`e${i}`))));
  t.deepEqual(ids, ids.map((_, i) => ids[0]! + i), 'consecutive ids');
  t.is(native.waiting(), 0, 'nothing queued before the turn ends');
  await Promise.resolve();
  t.is(native.waiting(), 6);
  const got = drain(slot);
  for (const tag of tags) {
    const mine = got.filter(([, tg]) => tg === tag);
    const expected = ids.map((id, i) => [id, tags[i % 2]!, `e${i}`] as [number, number, string]).filter(([, tg]) => tg === tag);
    t.deepEqual(mine, expected);
  }
});

test.serial('a full stage hands its events over at once, and flush() empties it before a direct push', (t) => {
  const slot = native.slotRegister(9102);
  const stage = new InvokeStage();
  const tag = 2 ** 40 + 14;
  const ids: number[] = [];
  for (let i = 0; i < 1500; i++) ids.push(stage.add(tag, 1, 1, 0, 0, null));
  t.is(native.waiting(), 1024, 'the first 1,024 went in when the stage filled');
  stage.flush();
  const direct = native.push(tag, 1, 1, 0, 0, null);
  const got = drain(slot).map(([id]) => id);
  t.deepEqual(got, [...ids, direct], 'staged events, then the direct push, in order');
  t.is(new Set(got).size, 1501);
});

test.serial('ids stay unique across reserved blocks and other pushers', (t) => {
  const slot = native.slotRegister(9103);
  const stage = new InvokeStage();
  const seen = new Set<number>();
  for (let i = 0; i < 5000; i++) {
    seen.add(stage.add(2 ** 40 + 16, 1, 1, 0, 0, null));
    if (i % 1000 === 0) seen.add(native.push(2 ** 40 + 18, 1, 1, 0, 0, null));
  }
  stage.flush();
  t.is(seen.size, 5005);
  const got = drain(slot).map(([id]) => id);
  t.deepEqual(got.sort((a, b) => a - b), [...seen].sort((a, b) => a - b));
});

test.serial("reading the queue's counts on the main thread hands the main stage over first", (t) => {
  const slot = native.slotRegister(9104);
  const id = invokeStage.add(2 ** 40 + 20, 1, 1, 0, 0, null);
  t.is(native.queueStats().waiting, 1, 'queueStats sees the staged event');
  const second = invokeStage.add(2 ** 40 + 20, 1, 1, 0, 0, null);
  t.is(native.waiting(), 2, 'so does waiting');
  t.deepEqual(drain(slot).map(([i]) => i), [id, second]);
});

test.serial('addValue stages plain payloads as Packr would encode them, and hands the others to Packr', async (t) => {
  const slot = native.slotRegister(9105);
  const stage = new InvokeStage();
  const tag = 2 ** 40 + 22;
  const values: unknown[] = [{ player: 'p-1', x: 3, y: -4, action: 'move' }, new Date(5), 'é'.repeat(70), undefined, [1, null, 'two'], new Set([1])];
  const ids = values.map((v) => stage.addValue(tag, 1, 1, 0, 0, v));
  await Promise.resolve();
  const meta = new Float64Array(64 * TAKE_STRIDE);
  const bytes = new Uint8Array(1 << 16);
  const n = native.take(slot, meta, bytes, 64);
  t.is(n, values.length);
  for (let i = 0; i < n; i++) {
    const m = (f: number): number => meta[i * TAKE_STRIDE + f]!;
    const offset = m(TakeField.payloadOffset), length = m(TakeField.payloadLength);
    t.is(m(TakeField.id), ids[i]!);
    t.is(Buffer.from(bytes.subarray(offset, offset + length)).toString('hex'), Buffer.from(encodePayload(values[i]) ?? []).toString('hex'), `value ${i}`);
    t.deepEqual(length === 0 ? undefined : decodePayload(bytes, offset, length), values[i] instanceof Set ? new Set([1]) : values[i]);
  }
  native.complete(slot, n, new Float64Array(n * COMPLETE_STRIDE));
});

test.serial('addValue hands a full stage over and starts again when a payload no longer fits', (t) => {
  const slot = native.slotRegister(9106);
  const stage = new InvokeStage();
  const tag = 2 ** 40 + 24;
  const text = 'x'.repeat(20_000);
  const ids = [0, 1, 2, 3, 4].map((i) => stage.addValue(tag, 1, 1, 0, 0, { i, text }));
  t.true(native.waiting() >= 3, 'the 64 KiB stage held three of them at most');
  stage.flush();
  const got = drain(slot);
  t.deepEqual(got.map(([id]) => id), ids);
  t.deepEqual(got.map(([, , s]) => s.length), ids.map(() => encodePayload({ i: 0, text })!.length));
  // A payload larger than the whole stage grows it.
  const big = stage.addValue(tag, 1, 1, 0, 0, 'y'.repeat(100_000));
  stage.flush();
  t.deepEqual(drain(slot, 1 << 18).map(([id, , s]) => [id, s.length]), [[big, 100_005]]);
});

test.serial('an id taken for an event pushed directly comes after the staged ones and before the next, which go first', (t) => {
  const slot = native.slotRegister(9105);
  const stage = new InvokeStage();
  const tag = 2 ** 40 + 50;
  const before = [stage.add(tag, 1, 1, 0, 0, Buffer.from('a')), stage.add(tag, 1, 1, 0, 0, Buffer.from('b'))];
  const direct = stage.takeId();
  t.is(native.waiting(), 2, 'taking an id hands the staged events over first');
  native.push(tag, 1, 1, 0, 0, Buffer.from('direct'), direct);
  const after = stage.add(tag, 1, 1, 0, 0, Buffer.from('c'));
  stage.flush();
  t.deepEqual([...before, direct, after], [before[0]!, before[0]! + 1, before[0]! + 2, before[0]! + 3]);
  t.deepEqual(drain(slot).map(([id, , text]) => [id, text]), [[before[0]!, 'a'], [before[0]! + 1, 'b'], [direct, 'direct'], [after, 'c']]);
});
