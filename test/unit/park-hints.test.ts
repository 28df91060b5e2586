import test from 'ava';
import { native, COMPLETE_STRIDE, EventKind, PARK_HINT_HANDLERS, PUSH_STRIDE, TAKE_STRIDE, TakeField } from '../../src/native.ts';

// The queue and the hints are process-global: ava runs this file in its own process, one test at a time.
test.serial.afterEach(() => native.queueReset());

const PARKS = 41, RETURNS = 42;

function push(rows: Array<[tag: number, handler: number]>): number {
  const r = new Float64Array(rows.length * PUSH_STRIDE);
  rows.forEach(([tag, handler], i) => r.set([tag, 1, handler, 0, EventKind.user, 0], i * PUSH_STRIDE));
  return native.pushBatch(r, rows.length, new Uint8Array(0));
}

/** Claims on `slot` and completes the claim; the ids it held. */
function claim(slot: number): number[] {
  const meta = new Float64Array(64 * TAKE_STRIDE);
  const n = native.take(slot, meta, new Uint8Array(64), 64);
  const ids = Array.from({ length: Math.max(0, n) }, (_, i) => meta[i * TAKE_STRIDE + TakeField.id]!);
  native.complete(slot, Math.max(0, n), new Float64Array(Math.max(1, n) * COMPLETE_STRIDE));
  return ids;
}

test.serial('a claim ends a tag\'s run after an event whose handler is marked to park, and takes other tags instead', (t) => {
  const hints = new Uint8Array(native.parkHintsView());
  t.is(hints.length, PARK_HINT_HANDLERS);
  const slot = native.slotRegister(9101);
  const a = 2 ** 41 + 2, b = 2 ** 41 + 4;
  let first = push([[a, PARKS], [a, RETURNS], [a, PARKS], [a, RETURNS], [b, RETURNS], [b, RETURNS]]);
  // Unmarked: whole runs, every event in one claim (whatever run queues the tags live in).
  t.deepEqual(claim(slot).sort((x, y) => x - y), [0, 1, 2, 3, 4, 5].map((k) => first + k));
  hints[PARKS] = 1;
  first = push([[a, PARKS], [a, RETURNS], [a, PARKS], [a, RETURNS], [b, RETURNS], [b, RETURNS]]);
  t.deepEqual(claim(slot).sort((x, y) => x - y), [first, first + 4, first + 5]);
  t.deepEqual(claim(slot), [first + 1, first + 2]);
  t.deepEqual(claim(slot), [first + 3]);
  t.deepEqual(claim(slot), []);
  // queueReset clears the hints.
  native.queueReset();
  t.is(hints[PARKS], 0);
});
