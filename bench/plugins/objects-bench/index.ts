/**
 * Handlers of bench/objects: a transfer between two accounts (two objects written), a gift
 * to one account, a batch of transfers in transactions of their own (many commits in flight
 * from one event), and a loop of cached fetches timed inside the handler.
 */
import { definePlugin, type ObjectAccess } from '../../../src/index.ts';

export interface Transfer {
  from: string;
  to: string;
  amount: number;
}

async function move(objects: ObjectAccess, t: Transfer): Promise<void> {
  const from = await objects.fetch('BenchAccount', t.from, 'write');
  const to = await objects.fetch('BenchAccount', t.to, 'write');
  if (!from || !to || from.get('coins') < t.amount) return;
  from.set('coins', from.get('coins') - t.amount);
  to.set('coins', to.get('coins') + t.amount);
}

export default definePlugin({
  name: 'objects-bench',
  version: '0.0.1',
  register(api) {
    // Declared async: its awaits (inside move) keep the event, and with it its transaction.
    api.event<Transfer>('bench.transfer', async (t) => move(api.objects, t));

    // A gift to one account: many at once are concurrent writers of one object.
    api.event<{ id: string; amount: number }>('bench.gift', async (p) => {
      const account = await api.objects.fetch('BenchAccount', p.id, 'write');
      if (account) account.set('coins', account.get('coins') + p.amount);
    });

    api.event<{ transfers: Transfer[] }>('bench.transfers', async (p) => {
      await Promise.all(p.transfers.map((t) => api.objects.transact((tx) => move(tx, t))));
      api.counters.increase('bench_objects', 'transfers_done', p.transfers.length);
    });

    // Every id once: each fetch is a lookup in the shared cache (none repeats within the event).
    api.event<{ ids: string[] }>('bench.fetch_loop', async (p) => {
      const start = performance.now();
      let n = 0;
      for (const id of p.ids) {
        if ((await api.objects.fetch('BenchAccount', id)) !== null) n++;
      }
      api.counters.updateDouble('bench_objects', 'fetch_us', ((performance.now() - start) * 1000) / Math.max(1, n));
      api.counters.update('bench_objects', 'fetched', n);
    });

    // The same lookups without waiting (`fetchCached`), as a synchronous handler makes them.
    api.event<{ ids: string[] }>('bench.fetch_now_loop', (p) => {
      const start = performance.now();
      let n = 0;
      for (const id of p.ids) {
        if (api.objects.fetchCached('BenchAccount', id)) n++;
      }
      api.counters.updateDouble('bench_objects', 'fetch_now_us', ((performance.now() - start) * 1000) / Math.max(1, n));
      api.counters.update('bench_objects', 'fetched_now', n);
    });
  },
});
