/**
 * `native.pluginRunEvents` refuses a range it cannot run with an argument error, before it
 * marks an event started or calls a plugin; an empty range runs nothing. (What it runs, in a
 * real server: test/integration/native-event-runs.test.ts.)
 */
import test from 'ava';
import { native, ContextCell, PROGRESS_STRIDE, RunState, TAKE_STRIDE, COMPLETE_STRIDE, TakeField } from '../../src/native.ts';

const cells = new Float64Array(native.pluginContextView());
const bytes = new Uint8Array(64);

function range(from: number, to: number, { started = -1, slot = 0, startMs = 0 } = {}): void {
  cells[ContextCell.runSlot] = slot;
  cells[ContextCell.runFrom] = from;
  cells[ContextCell.runTo] = to;
  cells[ContextCell.runStarted] = started;
  cells[ContextCell.runStartMs] = startMs;
}

function refused(t: import('ava').ExecutionContext, message: RegExp, meta = new Float64Array(4 * TAKE_STRIDE),
  timings = new Float64Array(4 * COMPLETE_STRIDE)): void {
  const err = t.throws(() => native.pluginRunEvents(0, meta, timings, bytes), { instanceOf: RangeError });
  t.regex(err!.message, message);
  t.is((err as Error & { code?: string }).code, 'GSF_ERR_NATIVE_ARGUMENT');
}

test('a range outside the claim, or a start after its end, is refused', (t) => {
  range(0, 5);
  refused(t, /the run's end lies outside meta or timings/);
  range(0, 2);
  refused(t, /the run's end lies outside meta or timings/, new Float64Array(4 * TAKE_STRIDE), new Float64Array(COMPLETE_STRIDE));
  range(3, 2);
  refused(t, /the run's start lies after its end/);
  range(0.5, 2);
  refused(t, /the run's start lies after its end/);
});

test('a slot, last started index or start time that cannot be is refused', (t) => {
  range(0, 2, { slot: 256 });
  refused(t, /the run's slot is out of range/);
  range(0, 2, { slot: -1 });
  refused(t, /the run's slot is out of range/);
  range(0, 2, { started: 2 });
  refused(t, /the last started index must be -1 or a claimed event/);
  range(0, 2, { started: -2 });
  refused(t, /the last started index must be -1 or a claimed event/);
  range(0, 2, { startMs: Number.NaN });
  refused(t, /the run's start must be a time in ms/);
});

test('a claimed payload outside bytes is refused before the event is started', (t) => {
  const meta = new Float64Array(4 * TAKE_STRIDE);
  meta[TakeField.payloadOffset] = 60;
  meta[TakeField.payloadLength] = 10;
  range(0, 1, { slot: 255 });
  const progress = new Int32Array(native.slotProgressView());
  const before = [...progress.subarray(255 * PROGRESS_STRIDE, 255 * PROGRESS_STRIDE + 3)];
  refused(t, /a claimed payload lies outside bytes/, meta);
  t.deepEqual([...progress.subarray(255 * PROGRESS_STRIDE, 255 * PROGRESS_STRIDE + 3)], before, 'the slot\'s progress cells are untouched');
});

test('an empty range runs nothing and says so', (t) => {
  range(2, 2, { started: 1 });
  const r = native.pluginRunEvents(0, new Float64Array(4 * TAKE_STRIDE), new Float64Array(4 * COMPLETE_STRIDE), bytes);
  t.is(r, null);
  t.is(cells[ContextCell.runNext], 2);
  t.is(cells[ContextCell.runStarted], 1);
  t.is(cells[ContextCell.runState], RunState.all);
});
