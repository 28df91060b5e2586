/**
 * A storm of transfers on one hot account, with an event timeout shorter than the storm: events
 * time out while they wait for their commits or their reruns. A timed-out event commits nothing
 * more and does not run again, so once the queue is idle and no commit is on its way, the
 * database holds every coin and nothing changes any more.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { waitFor } from './_server.ts';
import { BACKENDS, counter, idle, startObjectServer, storeArgs } from './_objects.ts';

const ACCOUNTS = 10_000;
const TRANSFERS = 8_000;

for (const backend of BACKENDS) {
  test.serial(`${backend}: events that time out in a conflict storm commit nothing after their timeout; the coin total holds`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend, { max_event_reruns: 50 }),
      { EventDispatcher: { event_threads_size: 4, event_timeout_in_ms: 500, slow_event_log_threshold_in_ms: 60000 } });
    try {
      const ids = await transact((tx) => Array.from({ length: ACCOUNTS }, (_, i) => tx.create('ProbeAccount', { name: `hot${i}`, coins: 1000 }).id));
      for (let i = 0; i < TRANSFERS; i++) {
        const other = ids[1 + ((i * 7919) % (ids.length - 1))]!;
        // One transfer in ten takes from or gives to the hot account.
        const [from, to] = i % 10 === 0 ? (i % 20 === 0 ? [ids[0]!, other] : [other, ids[0]!]) : [other, ids[1 + ((i * 104729) % (ids.length - 1))]!];
        if (from !== to) s.server.invoke('objp.transfer', { from, to, amount: 1 + (i % 5) });
      }
      await idle(120000);
      await waitFor(() => counter('object', 'outstanding_update_query') === 0, 60000, 'every commit on its way');
      const total = async (): Promise<number> => {
        native.objCacheClear();
        const coins = await transact(async (tx) => Promise.all(ids.map(async (id) => (await tx.fetch('ProbeAccount', id))!.get('coins'))));
        return coins.reduce((a, b) => a + b, 0);
      };
      const committed = counter('object_database_stat', `${backend}/committed_events`);
      t.is(await total(), ACCOUNTS * 1000);
      // Nothing was still running: a second look a while later finds no new commit.
      await new Promise((r) => setTimeout(r, 1000));
      t.is(counter('object_database_stat', `${backend}/committed_events`), committed);
      t.is(await total(), ACCOUNTS * 1000);
      t.true(s.logs().some((l) => l.includes('Event timeout: event_name=objp.transfer')), 'no event timed out: the storm tested nothing');
    } finally {
      await s.stop();
    }
  });
}
