/**
 * The outbound ring end to end (a writer on a worker thread, the main thread's reader), at its
 * edges:
 * - A frame too large for the ring travels with the flush message, and the ring holds a record
 *   pointing to it. When the ring is full just then, making room flushes first: the frame must
 *   still arrive, in its place, and nothing be reported missing.
 * - An awaiting event's operations are held, and dropped if it times out (`hold`, `discard`). An
 *   event that found the ring full of an earlier event's records made room mid-event: the
 *   earlier event's records go to the main thread, the event's own stay held.
 * - When an event worker is ended (an event hung past its timeout), what its finished events
 *   produced is still delivered (`OutboundReader.recover`), a frame too large for the ring too.
 */
import test from 'ava';
import { MARKER, startRingWorker, type Seen } from './_outbound.ts';

const CAPACITY = 4096;
const SMALL = 100; // 128-byte records: 32 fill the ring
const LARGE = 2000; // above a quarter of the ring: carried by the flush message

/** Runs fixture `name` in `mode` until its marker frame arrived; what reached the session. */
async function run(mode: string, name = 'ring-writer.ts'): Promise<Seen> {
  const w = await startRingWorker(name, { mode, capacity: CAPACITY, small: SMALL, large: LARGE });
  try {
    w.worker.postMessage('go');
    await w.until((seen) => seen.frames.some(([first]) => first === MARKER));
    return w.seen;
  } finally {
    await w.stop();
  }
}

const small = Array.from({ length: CAPACITY / 128 }, (_, i): [number, number] => [i, SMALL]);

test.serial('a large frame written when the ring is full arrives after the frames before it', async (t) => {
  const { frames, errors } = await run('inline');
  t.deepEqual(errors, []);
  t.deepEqual(frames, [...small, [255, LARGE], [MARKER, SMALL]]);
});

test.serial('a held large frame written back when the ring is full arrives after the frames before it', async (t) => {
  const { frames, errors } = await run('held');
  t.deepEqual(errors, []);
  t.deepEqual(frames, [...small, [255, LARGE], [MARKER, SMALL]]);
});

const runHold = (mode: 'discard' | 'release' | 'finish'): Promise<Seen> => run(mode, 'ring-writer-hold.ts');

const first = [240, ...Array.from({ length: Math.floor((CAPACITY - 24) / 128) }, (_, i) => i)];
const firstBytes = (frames: Array<[number, number]>): number[] => frames.map(([b]) => b);

test.serial('an event that timed out after making room mid-event has none of its frames delivered', async (t) => {
  const { frames, errors } = await runHold('discard');
  t.deepEqual(errors, []);
  t.deepEqual(firstBytes(frames), [...first, MARKER]);
});

test.serial('an event that finished after making room mid-event has its frames delivered in order, the large one too', async (t) => {
  const { frames, errors } = await runHold('release');
  t.deepEqual(errors, []);
  t.deepEqual(firstBytes(frames), [...first, 250, 100, MARKER]);
  t.is(frames[first.length]![1], LARGE);
});

test.serial('an event that made room mid-event and did not await has its frames delivered in order, the large one too', async (t) => {
  const { frames, errors } = await runHold('finish');
  t.deepEqual(errors, []);
  t.deepEqual(firstBytes(frames), [...first, 250, 100, MARKER]);
  t.is(frames[first.length]![1], LARGE);
});

test.serial('a large frame of a finished event is delivered when its worker is ended before the flush', async (t) => {
  // Set by the worker once its event B has started (A's records are final and were posted).
  const started = new Int32Array(new SharedArrayBuffer(4));
  const w = await startRingWorker('ring-writer-ended.ts', { capacity: CAPACITY, small: SMALL, large: LARGE, started: started.buffer });
  try {
    // Event A runs and B hangs while this thread does not yield, so whatever the worker posted
    // on its port is still waiting there when the dispatcher ends it and delivers what its
    // finished events produced.
    w.worker.postMessage('go');
    t.is(Atomics.wait(started, 0, 0, 10_000), 'ok');
    w.reader.recover(w.reader.reserve(w.worker.threadId), true);
  } finally {
    await w.stop();
  }
  t.deepEqual(w.seen.errors, []);
  t.deepEqual(w.seen.frames, [[1, SMALL], [255, LARGE], [2, SMALL]]);
});
