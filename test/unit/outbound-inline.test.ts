/**
 * A frame too large for a worker's outbound ring travels with the flush message, and the ring
 * holds a record pointing to it. When the ring is full just then, making room flushes first:
 * the frame must still arrive, in its place, and nothing be reported missing.
 */
import test from 'ava';
import { MARKER, startRingWorker, type Seen } from './_outbound.ts';

const CAPACITY = 4096;
const SMALL = 100; // 128-byte records: 32 fill the ring
const LARGE = 2000; // above a quarter of the ring: carried by the flush message

async function run(mode: 'inline' | 'held'): Promise<Seen> {
  const w = await startRingWorker('ring-writer.ts', { mode, capacity: CAPACITY, small: SMALL, large: LARGE });
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
