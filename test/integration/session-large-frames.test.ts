/**
 * Frames too large for a worker's session-out ring travel beside it (with their flush on the
 * worker's port) while the others go through the ring and the native flush mailbox: a session
 * gets them all, in the order its handlers sent them, from several sessions at once.
 */
import test from 'ava';
import { startSessionServer } from './_session.ts';

const MiB = 1024 * 1024;

test('large and small frames to one session arrive in the order they were sent, beside other sessions', async (t) => {
  // Four event threads, and room for a client to take 6 MiB of frames at once.
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 4 }, SessionService: { max_backpressure_bytes: 16 * MiB } });
  try {
    const clients = await Promise.all([s.connect('json'), s.connect('msgpack'), s.connect('json')]);
    // Over a quarter of the ring (4 MiB) a frame is inline; the rest fit in the ring.
    const sizes = [10, 1.5 * MiB, 20, 100, 2 * MiB, 30, 1.25 * MiB, 40, 50];
    const runs = await Promise.all(clients.map(async (c) => {
      const got: Array<{ i: number; length: number }> = [];
      c.on<{ i: number; blob: string }>('sized', (b) => got.push({ i: b.i, length: b.blob.length }));
      for (let round = 0; round < 3; round++) {
        // One request (one event) per frame, all in flight at once: the frames leave in many
        // flushes, some through the ring's notes and some with their port message.
        t.deepEqual(await Promise.all(sizes.map((size) => c.request('sizes', { sizes: [size] }))), sizes.map(() => 1));
      }
      // Replies are sent after the frames: every frame of the three rounds is here.
      return got;
    }));
    const expected = [0, 1, 2].flatMap(() => sizes.map((size) => ({ i: 0, length: size })));
    for (const got of runs) t.deepEqual(got, expected);
    await Promise.all(clients.map((c) => c.close()));
  } finally {
    await s.stop();
  }
});
