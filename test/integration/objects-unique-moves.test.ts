/**
 * Unique keys moving between the objects of one commit: two objects swap names, a new object
 * takes the name another gives up or loses with its delete. The commit is one unit, so only its
 * final state counts, whatever the order of the handler's calls. Two objects of one commit with
 * the same key are refused at once, without reruns.
 */
import test from 'ava';
import { transact } from '../../src/objects/plugin-api.ts';
import { startObjectServer, stopPostgres, storeArgs, BACKENDS } from './_objects.ts';

test.after.always(stopPostgres);

const outcome = (p: Promise<unknown>): Promise<string> => p.then((v) => `ok ${String(v)}`, (e: Error) => `failed: ${e.message}`);
const holder = (name: string): Promise<string | null> => transact(async (tx) => (await tx.fetchBy('ProbeAccount', 'name', name))?.id ?? null);

for (const backend of BACKENDS) {
  test.serial(`${backend}: two objects swap their unique names in one commit`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend, { max_event_reruns: 2 }));
    try {
      const [a, b] = await transact((tx) => [tx.create('ProbeAccount', { name: 'left' }).id, tx.create('ProbeAccount', { name: 'right' }).id]);
      const swapped = await outcome(transact(async (tx) => {
        const x = (await tx.fetch('ProbeAccount', a!, 'write'))!;
        const y = (await tx.fetch('ProbeAccount', b!, 'write'))!;
        x.set('name', 'right');
        y.set('name', 'left');
        return 'swapped';
      }));
      t.is(swapped, 'ok swapped');
      t.deepEqual([await holder('right'), await holder('left')], [a, b]);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: a new object takes a name another object of the commit gives up or loses, in either order of the calls`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend, { max_event_reruns: 2 }));
    try {
      const [old1, old2, old3, old4] = await transact((tx) => ['taken1', 'taken2', 'taken3', 'taken4'].map((name) => tx.create('ProbeAccount', { name }).id));
      const results = [
        // Rename the holder, then create under the freed name.
        await outcome(transact(async (tx) => {
          (await tx.fetch('ProbeAccount', old1!, 'write'))!.set('name', 'renamed1');
          tx.create('ProbeAccount', { name: 'taken1' }, { id: 'new1' });
          return 'done';
        })),
        // Create first, then rename the holder.
        await outcome(transact(async (tx) => {
          tx.create('ProbeAccount', { name: 'taken2' }, { id: 'new2' });
          (await tx.fetch('ProbeAccount', old2!, 'write'))!.set('name', 'renamed2');
          return 'done';
        })),
        // Create first, then delete the holder.
        await outcome(transact(async (tx) => {
          tx.create('ProbeAccount', { name: 'taken3' }, { id: 'new3' });
          tx.delete((await tx.fetch('ProbeAccount', old3!, 'write'))!);
          return 'done';
        })),
        // A rename into the name of an object the commit deletes afterwards.
        await outcome(transact(async (tx) => {
          (await tx.fetch('ProbeAccount', old4!, 'write'))!.set('name', 'taken1');
          tx.delete((await tx.fetch('ProbeAccount', 'new1', 'write'))!);
          return 'done';
        })),
      ];
      t.deepEqual(results, ['ok done', 'ok done', 'ok done', 'ok done']);
      t.deepEqual(await Promise.all(['taken1', 'taken2', 'taken3', 'renamed1', 'renamed2', 'taken4'].map(holder)),
        [old4, 'new2', 'new3', old1, old2, null]);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: two objects of one commit with the same unique name are refused at once, naming both`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend, { max_event_reruns: 3 }));
    try {
      const kept = await transact((tx) => tx.create('ProbeAccount', { name: 'kept' }).id);
      let runs = 0;
      const created = await outcome(transact((tx) => {
        runs++;
        tx.create('ProbeAccount', { name: 'twin' }, { id: 'twin-a' });
        tx.create('ProbeAccount', { name: 'twin' }, { id: 'twin-b' });
        return 'done';
      }));
      t.is(created, `failed: ProbeAccount.name "twin" would belong to two objects of one commit ('twin-a' and 'twin-b'): a unique key names one object`);
      t.is(runs, 1);
      // A changed object taking the name of a new one.
      runs = 0;
      const renamed = await outcome(transact(async (tx) => {
        runs++;
        tx.create('ProbeAccount', { name: 'fresh' }, { id: 'fresh-a' });
        (await tx.fetch('ProbeAccount', kept, 'write'))!.set('name', 'fresh');
        return 'done';
      }));
      t.is(renamed, `failed: ProbeAccount.name "fresh" would belong to two objects of one commit ('fresh-a' and '${kept}'): a unique key names one object`);
      t.is(runs, 1);
      // Nothing of either commit was written.
      t.deepEqual(await Promise.all(['twin', 'fresh', 'kept'].map(holder)), [null, null, kept]);
    } finally {
      await s.stop();
    }
  });
}
