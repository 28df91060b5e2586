/**
 * What a reload leaves behind on the main thread: the event threads it retires are let go with
 * their outbound rings (shared memory the size of the ring each) and channel ports, so repeated
 * reloads do not pile them up. bench/reload-memory measures the process's RSS over many reloads.
 */
import test from 'ava';
import { activeSessions } from '../../src/session/main/feature.ts';
import { waitFor } from './_server.ts';
import { startSessionServer } from './_session.ts';
import { PLUGIN, newPluginDir, post } from './_reload.ts';

test('retired event threads are let go with their rings and ports after forced reloads', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } }, [dir]);
  const c = await s.connect('json');
  try {
    const reader = activeSessions!.reader;
    t.is(reader.heldRings, 2);
    for (let i = 0; i < 3; i++) {
      t.is((await post(s, `/v1/plugins/${PLUGIN}/reload?force=true`)).status, 200);
      // A reply from every pool, so each one's ring is in use.
      t.like(await c.request('ping', { n: i }), { n: i });
    }
    await waitFor(() => reader.heldRings === 2 && reader.heldPorts === 2, 30_000, 'the retired threads\' rings and ports let go');
    t.is(reader.heldRings, 2);
    t.is(reader.heldPorts, 2);
    t.like(await c.request('ping', { n: 9 }), { n: 9 });
  } finally {
    await c.close();
    await s.stop();
  }
});
