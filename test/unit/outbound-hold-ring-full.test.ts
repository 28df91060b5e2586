/**
 * An awaiting event's operations are held, and dropped if it times out (`OutboundWriter.hold`,
 * `discard`). An event that found the ring full of an earlier event's records made room
 * mid-event: the earlier event's records go to the main thread, the event's own stay held.
 */
import test from 'ava';
import { MARKER, startRingWorker, type Seen } from './_outbound.ts';

const CAPACITY = 4096;
const SMALL = 100;
const LARGE = 2000; // above a quarter of the ring: carried by the flush message

async function run(mode: 'discard' | 'release' | 'finish'): Promise<Seen> {
  const w = await startRingWorker('ring-writer-hold.ts', { capacity: CAPACITY, small: SMALL, large: LARGE, mode });
  try {
    w.worker.postMessage('go');
    await w.until((seen) => seen.frames.some(([first]) => first === MARKER));
    return w.seen;
  } finally {
    await w.stop();
  }
}

const first = [240, ...Array.from({ length: Math.floor((CAPACITY - 24) / 128) }, (_, i) => i)];
const firstBytes = (frames: Array<[number, number]>): number[] => frames.map(([b]) => b);

test.serial('an event that timed out after making room mid-event has none of its frames delivered', async (t) => {
  const { frames, errors } = await run('discard');
  t.deepEqual(errors, []);
  t.deepEqual(firstBytes(frames), [...first, MARKER]);
});

test.serial('an event that finished after making room mid-event has its frames delivered in order, the large one too', async (t) => {
  const { frames, errors } = await run('release');
  t.deepEqual(errors, []);
  t.deepEqual(firstBytes(frames), [...first, 250, 100, MARKER]);
  t.is(frames[first.length]![1], LARGE);
});

test.serial('an event that made room mid-event and did not await has its frames delivered in order, the large one too', async (t) => {
  const { frames, errors } = await run('finish');
  t.deepEqual(errors, []);
  t.deepEqual(firstBytes(frames), [...first, 250, 100, MARKER]);
  t.is(frames[first.length]![1], LARGE);
});
