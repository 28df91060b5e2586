/**
 * An object deleted and then created again under the same id (a per-account singleton keyed by
 * the account's id, say): it is found by id past the tombstone the delete left in the cache, an
 * event that read the deleted object conflicts instead of writing over the new one, and one
 * event that deletes and creates again writes the new object's unique keys.
 */
import test from 'ava';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { waitFor } from './_server.ts';
import { BACKENDS, idle, readNotes, startObjectServer, stopPostgres, storeArgs } from './_objects.ts';
import type { ObjectNote } from '../fixtures/plugins/objects-probe/index.ts';

test.after.always(stopPostgres);

for (const backend of BACKENDS) {
  test.serial(`${backend}: an object created again under the id of a deleted one is found by id`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      await transact((tx) => tx.create('ProbeAccount', { name: 'first', coins: 1 }, { id: 'reborn' }));
      await transact(async (tx) => tx.delete((await tx.fetch('ProbeAccount', 'reborn', 'write'))!));
      await transact((tx) => tx.create('ProbeAccount', { name: 'second', coins: 2 }, { id: 'reborn' }));
      // The database holds it...
      const byName = await transact(async (tx) => (await tx.fetchBy('ProbeAccount', 'name', 'second'))?.get('coins') ?? null);
      t.is(byName, 2);
      // ...and so must a fetch by its id.
      const byId = await transact(async (tx) => (await tx.fetch('ProbeAccount', 'reborn'))?.get('coins') ?? null);
      t.is(byId, 2);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: an event that read a deleted object for write does not commit over the object re-created under its id`, async (t) => {
    for (const name of ['go', 'fetched', 'runs']) native.counterUpdate('objp', name, 0, false);
    const s = await startObjectServer(await storeArgs(backend));
    try {
      await transact((tx) => tx.create('ProbeAccount', { name: 'old', coins: 0 }, { id: 'aba' }));
      const file = path.join(s.dir, 'slow.jsonl');
      s.server.invoke('objp.slow_add', { id: 'aba', file });
      await waitFor(() => readNotes<ObjectNote>(file).some((n) => n.label === 'fetched'), 10000, 'the event to fetch');
      // Meanwhile the object is deleted and another one is created under its id.
      await transact(async (tx) => tx.delete((await tx.fetch('ProbeAccount', 'aba', 'write'))!));
      await transact((tx) => tx.create('ProbeAccount', { name: 'new', coins: 100 }, { id: 'aba' }));
      native.counterUpdate('objp', 'go', 1, false);
      await idle();
      native.objCacheClear();
      const now = await transact(async (tx) => {
        const a = await tx.fetch('ProbeAccount', 'aba');
        return a === null ? null : [a.get('name'), a.get('coins')];
      });
      // The event read the deleted object: its commit must conflict, and its rerun adds 1 to the new one.
      t.deepEqual(now, ['new', 101]);
    } finally {
      await s.stop();
    }
  });
}

for (const backend of BACKENDS) {
  test.serial(`${backend}: delete and create again under the same id in one event, with a new name: the new name finds it, the old one is free`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      await transact((tx) => tx.create('ProbeAccount', { name: 'before', coins: 1 }, { id: 'same' }));
      await transact(async (tx) => {
        tx.delete((await tx.fetch('ProbeAccount', 'same', 'write'))!);
        tx.create('ProbeAccount', { name: 'after', coins: 2 }, { id: 'same' });
      });
      native.objCacheClear();
      const byNew = await transact(async (tx) => (await tx.fetchBy('ProbeAccount', 'name', 'after'))?.id ?? null);
      const byOld = await transact(async (tx) => {
        const o = await tx.fetchBy('ProbeAccount', 'name', 'before');
        return o === null ? null : `${o.id} named ${o.get('name')}`;
      });
      // The old name is free again: another account may take it.
      const other = await transact((tx) => tx.create('ProbeAccount', { name: 'before' }).get('name')).catch((err: Error) => err.message);
      t.deepEqual([byNew, byOld, other], ['same', null, 'before']);
    } finally {
      await s.stop();
    }
  });
}
