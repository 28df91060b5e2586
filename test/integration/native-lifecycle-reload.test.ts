/**
 * ABI 1.2 lifecycle across a hot reload: the old copy's on_stop runs before the swap; once its
 * events have drained gsf ends the timers it left running, releases their user data (and its
 * timeout handler's) and runs its on_unload; the new copy starts with its own on_start. The fixture counts what it made, what gsf dropped
 * and which hooks ran, in counters that outlive the copy.
 */
import test from 'ava';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { post } from './_reload.ts';

const PROBE = path.join(fixtures, 'native-plugins', 'native-lifecycle');
const value = (name: string): number => native.counterValue('lifecycle', name) ?? 0;

test('a reload calls the old copy on_unload, ends its timers releasing their user data, and starts the new copy', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 5000 } }, ['objects-probe', PROBE]);
  try {
    t.is(value('started'), 1);
    t.is(value('made'), 1, "the timeout handler's user data, made at init");
    s.server.invoke('lifecycle.timers');
    // Three timers end by themselves; the fourth repeats every minute.
    await waitFor(() => value('made') === 5 && value('dropped') === 3, 10000, 'three timers to end');
    t.is(value('unloaded'), 0);

    // The same library, loaded again from a fresh copy (?force=true: its source did not change).
    const reloaded = await post(s, '/v1/plugins/native-lifecycle/reload?force=true');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.like(reloaded.body, { reloaded: [{ name: 'native-lifecycle', kind: 'native', version: '1.0.0' }] });
    t.is(value('stopped'), 1, "the old copy's on_stop ran before the swap, as a managed plugin's onStop does");
    // Once the old event threads have finished what they held, the old copy's timer left running
    // and its timeout handler's user data are released, then its on_unload runs. The new copy
    // made its own timeout handler's, and its on_start ran.
    await waitFor(() => value('unloaded') === 1, 10000, "the old copy's on_unload");
    t.is(value('dropped'), 5);
    t.is(value('made'), 6);
    await waitFor(() => value('started') === 2, 10000, "the new copy's on_start");
    t.is(value('timer_runs'), 2, 'the ended timer never ran');

    // The new copy serves: its timers run and release as the old ones did.
    s.server.invoke('lifecycle.timers');
    await waitFor(() => value('made') === 10 && value('dropped') === 8, 10000, "the new copy's timers");
  } finally {
    await s.stop();
  }
  // At shutdown the new copy stops (it is not unloaded), and what it still held is released.
  t.is(value('stopped'), 2);
  t.is(value('unloaded'), 1);
  t.is(value('made'), value('dropped') + 1, "all but the last copy's timeout handler's user data");
});
