/**
 * An event stuck in a JavaScript loop past its timeout has its thread ended, and the thread is
 * seen to exit: it is not reported as stuck in native code (`engine/event_threads_abandoned`, a
 * "did not end" line) once the abandon delay has passed. piscina tells of a worker's destroy
 * before its thread stops, so the exit is read from the Worker itself.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor } from './_server.ts';

test.serial('a handler stuck in a JavaScript loop past its timeout: its thread is ended and exits, not reported abandoned', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 100 } });
  try {
    const abandoned = (): number => native.counterValue('engine', 'event_threads_abandoned') ?? 0;
    const before = abandoned();
    s.server.invoke('probe.note', { file: '', label: 'spin', spinMs: 600 }, { name: 'spin' });
    await waitFor(() => (native.counterValue('engine', 'event_threads_ended') ?? 0) >= 1, 5000, 'the thread to be ended');
    t.is(s.server.dispatcher.threadsEnding, 1);
    await waitFor(() => s.server.dispatcher.threadsEnding === 0, 4000, 'the ended thread to exit');
    t.is(abandoned() - before, 0);
    t.deepEqual(s.logs().filter((l) => l.includes('did not end')), []);
    // A new event thread serves.
    const file = `${s.dir}/after.jsonl`;
    s.server.invoke('probe.note', { file, label: 'after' });
    await waitFor(() => import('node:fs').then((fs) => fs.existsSync(file)), 5000, 'an event after');
  } finally {
    await s.stop();
  }
});
