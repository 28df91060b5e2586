import test from 'ava';
import { native } from '../../src/native.ts';
import { namedTag } from '../../src/events/tags.ts';
import { startTestServer, waitFor } from './_server.ts';

test.serial('event_threads_size resizes the pool while events flow: none lost, repeated or reordered', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  try {
    const tags = 400;
    const perTag = 50;
    let seq = 0;
    const pushRound = (): void => {
      seq++;
      for (let k = 0; k < tags; k++) {
        s.server.invoke('probe.note', { file: '', label: '', key: `r${k}`, seq, spinMs: 0.01 }, { tag: namedTag(`resize-${k}`) });
      }
    };
    for (let round = 0; round < perTag; round++) {
      pushRound();
      if (round === 10) t.deepEqual(s.server.thread.flags.setFromText('event_threads_size', '1'), { ok: true, value: 1 });
      if (round === 25) t.deepEqual(s.server.thread.flags.setFromText('event_threads_size', '3'), { ok: true, value: 3 });
      await new Promise((r) => setImmediate(r));
    }
    const total = tags * perTag;
    await waitFor(() => native.counterReadInt('probe', 'notes') === total, 60000, 'all events');
    await new Promise((r) => setTimeout(r, 100));
    t.is(native.counterReadInt('probe', 'notes'), total, 'nothing ran twice');
    t.is(native.counterReadInt('probe', 'order_violations'), null);
    // The size is the serving pool's: the resize to 3 may still be loading its threads.
    await waitFor(() => s.server.dispatcher.size === 3, 60000, 'the 3 threads to serve');
    t.deepEqual(s.server.thread.flags.setFromText('event_threads_size', '0'), { ok: false, reason: 'invalid', problem: 'must be a positive integer' });
  } finally {
    await s.stop();
  }
});
