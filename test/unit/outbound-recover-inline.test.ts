/**
 * When an event worker is ended (an event hung past its timeout), what its finished events
 * produced is still delivered (`OutboundReader.recover`, up to the ring's committed mark). A
 * frame too large for the ring is such a product too: it must arrive, in its place.
 */
import test from 'ava';
import { startRingWorker } from './_outbound.ts';

const SMALL = 100;
const LARGE = 2000; // above a quarter of the ring: not kept in it

test.serial('a large frame of a finished event is delivered when its worker is ended before the flush', async (t) => {
  // Set by the worker once its event B has started (A's records are final and were posted).
  const started = new Int32Array(new SharedArrayBuffer(4));
  const w = await startRingWorker('ring-writer-ended.ts', { capacity: 4096, small: SMALL, large: LARGE, started: started.buffer });
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
