/**
 * The object store on both backends, through transactions on the main thread: values of every
 * field type survive the database, reads see their own writes, bad values are refused with
 * exact messages, conflicts apply nothing, a group's failing event never fails its neighbours,
 * and the cache answers what was committed.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { threadStore } from '../../src/objects/thread-store.ts';
import { Transaction } from '../../src/objects/transaction.ts';
import { counterRegistry } from '../../src/counters/registry.ts';
import { BACKENDS, counter, startObjectServer, stopPostgres, storeArgs } from './_objects.ts';
import { apiUrl } from './_session.ts';
import { waitFor } from './_server.ts';

test.after.always(stopPostgres);

for (const backend of BACKENDS) {
  test.serial(`${backend}: every field type round-trips through the database; reads see the transaction's own writes`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const joined = new Date('2024-05-06T07:08:09.123Z');
      const ids = await transact(async (tx) => {
        const ada = tx.create('ProbeAccount', {
          name: 'ada', coins: 7, ratio: 0.25, active: false, joined, tags: ['a', 'b'], stats: { wins: 3, losses: 0 },
        });
        const bob = tx.create('ProbeAccount', { name: 'bob' }, { id: 'bob-1' });
        bob.set('best', ada.id);
        // Own writes: by id and by key, before the commit.
        t.is(await tx.fetch('ProbeAccount', 'bob-1'), bob);
        t.is(await tx.fetchBy('ProbeAccount', 'name', 'ada'), ada);
        const item = tx.create('ProbeItem', { owner: ada.id, kind: 'sword', serial: 42 });
        return { ada: ada.id, item: item.id };
      });
      t.is(typeof ids.ada, 'string');
      // Drop the cache so the next reads come from the database.
      native.objCacheClear();
      const before = counter('object_database_stat', `${backend}/fetch_queries`);
      const seen = await transact(async (tx) => ({
        ada: (await tx.fetch('ProbeAccount', ids.ada))!.toJSON(),
        bob: (await tx.fetchBy('ProbeAccount', 'name', 'bob'))!.toJSON(),
        item: (await tx.fetchBy('ProbeItem', 'serial', 42))!.toJSON(),
        none: await tx.fetch('ProbeAccount', 'nobody'),
      }));
      t.deepEqual(seen.ada, {
        id: ids.ada, name: 'ada', coins: 7, ratio: 0.25, active: false, joined, tags: ['a', 'b'], stats: { wins: 3, losses: 0 }, best: null,
      });
      t.deepEqual(seen.bob, {
        id: 'bob-1', name: 'bob', coins: 0, ratio: 0.5, active: true, joined: new Date('2020-01-01T00:00:00.000Z'), tags: [], stats: {}, best: ids.ada,
      });
      t.deepEqual(seen.item, { id: ids.item, owner: ids.ada, kind: 'sword', serial: 42 });
      t.is(seen.none, null);
      t.is(counter('object_database_stat', `${backend}/fetch_queries`) - before, 4);
      // Now cached: the same reads cost no query and count as cache hits.
      const tx = new Transaction(threadStore());
      await tx.fetch('ProbeAccount', ids.ada);
      await tx.fetchBy('ProbeAccount', 'name', 'bob');
      t.deepEqual(tx.stats, { created: 0, fetched: 2, cacheHits: 2, nonexistent: 0, readMode: 2 });
      t.is(counter('object_database_stat', `${backend}/fetch_queries`) - before, 4);
      t.is(counterRegistry.read('engine_object_model', 'ProbeAccount'), 2);
      t.is(counterRegistry.read('engine_object_model', 'ProbeItem'), 1);
      t.true((counterRegistry.read('object', 'cached_objects') as number) >= 3);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: bad values, unknown types and fields, and misuse are refused with exact messages`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const tx = new Transaction(threadStore());
      const err = (fn: () => unknown): string => t.throws(fn)!.message;
      t.is(err(() => tx.create('Nope', {})), "unknown object type 'Nope' (declared: ProbeAccount, ProbeItem)");
      t.is(err(() => tx.create('ProbeAccount', {})), "create ProbeAccount: field 'name' is required (it has no default)");
      t.is(err(() => tx.create('ProbeAccount', { name: 'x', coins: 1.5 })), 'ProbeAccount.coins must be an integer');
      t.is(err(() => tx.create('ProbeAccount', { name: 'x', colour: 'red' })),
        "ProbeAccount has no field 'colour' (fields: name, coins, ratio, active, joined, tags, stats, best)");
      t.is(err(() => tx.create('ProbeAccount', { name: 'x', tags: ['a', 2] })), 'ProbeAccount.tags [1] must be a string');
      t.is(err(() => tx.create('ProbeAccount', { name: 'x', stats: { a: 'b' } })), 'ProbeAccount.stats ["a"] must be an integer');
      t.is(err(() => tx.create('ProbeAccount', { name: 'x', joined: new Date('nope') })), 'ProbeAccount.joined must be a valid Date');
      t.is(err(() => tx.create('ProbeAccount', { name: 'x' }, { id: '' })),
        'ProbeAccount id must be a non-empty string of at most 255 characters without NUL or unpaired surrogates, got ""');
      const a = tx.create('ProbeAccount', { name: 'x' });
      t.is(err(() => a.set('active', 'yes')), 'ProbeAccount.active must be true or false');
      t.is(err(() => (a.get('tags') as string[]).push('z')), 'Cannot add property 0, object is not extensible');
      await t.throwsAsync(tx.fetchBy('ProbeAccount', 'coins', 1), { message: 'ProbeAccount.coins is not a unique key (keys: name)' });
      await t.throwsAsync(tx.fetch('ProbeAccount', 'id', 'lock' as never), { message: "fetch mode must be 'read' or 'write', got \"lock\"" });
      // An id no object can have (a client's input, say) finds nothing; one that is no string is a mistake.
      t.is(await tx.fetch('ProbeAccount', 'a\u0000b'), null);
      t.is(await tx.fetch('ProbeAccount', 'x'.repeat(256), 'write'), null);
      t.is(tx.fetchCached('ProbeAccount', ''), null);
      await t.throwsAsync(tx.fetch('ProbeAccount', 7 as never), { message: 'ProbeAccount id must be a non-empty string of at most 255 characters without NUL or unpaired surrogates, got 7' });
      const other = new Transaction(threadStore());
      t.is(err(() => other.delete(a)), 'delete: the object must come from this event (fetch or create it here)');
      t.deepEqual(await tx.commit(), { ok: true });
      t.is(err(() => a.set('coins', 1)), 'set ProbeAccount.coins: the transaction has already been committed or discarded');
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: a conflicting commit applies nothing of its event; a fetched-for-write object is checked`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const [a, b] = await transact((tx) => [tx.create('ProbeAccount', { name: 'a', coins: 10 }).id, tx.create('ProbeAccount', { name: 'b', coins: 10 }).id]);
      const store = threadStore();
      const first = new Transaction(store);
      const second = new Transaction(store);
      const checker = new Transaction(store);
      const a1 = (await first.fetch('ProbeAccount', a, 'write'))!;
      const a2 = (await second.fetch('ProbeAccount', a))!;
      const b2 = (await second.fetch('ProbeAccount', b))!;
      await checker.fetch('ProbeAccount', a, 'write');
      checker.create('ProbeItem', { owner: a, kind: 'shield', serial: 1 });
      a1.set('coins', 11);
      t.deepEqual(await first.commit(), { ok: true });
      b2.set('coins', 0);
      a2.set('coins', 20);
      const result = await second.commit();
      t.deepEqual(result, { ok: false, conflict: true, reason: `ProbeAccount '${a}' changed since it was read`, waited: false });
      t.deepEqual(await checker.commit(), { ok: false, conflict: true, reason: `ProbeAccount '${a}' changed since it was read`, waited: false });
      native.objCacheClear();
      const after = await transact(async (tx) => [
        (await tx.fetch('ProbeAccount', a))!.get('coins'), (await tx.fetch('ProbeAccount', b))!.get('coins'),
        await tx.fetchBy('ProbeItem', 'serial', 1),
      ]);
      t.deepEqual(after, [11, 10, null]);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: one group: a taken unique key and a stale delete fail alone; their neighbours commit`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const taken = await transact((tx) => tx.create('ProbeAccount', { name: 'taken' }).id);
      const store = threadStore();
      const stale = new Transaction(store);
      const staleCopy = (await stale.fetch('ProbeAccount', taken))!;
      await transact(async (tx) => (await tx.fetch('ProbeAccount', taken))!.set('coins', 5));
      stale.delete(staleCopy);
      const groupsBefore = counter('object_database_stat', `${backend}/commit_groups`);
      // Sent in the same turn of the loop: one message, one group.
      const txs = Array.from({ length: 6 }, () => new Transaction(store));
      txs.forEach((tx, i) => tx.create('ProbeAccount', { name: i === 2 ? 'taken' : `n${i}`, coins: i }));
      const results = await Promise.all([...txs.map((tx) => tx.commit()), stale.commit()]);
      t.is(counter('object_database_stat', `${backend}/commit_groups`) - groupsBefore, 1);
      t.deepEqual(results.map((r) => r.ok), [true, true, false, true, true, true, false]);
      t.deepEqual(results[2], { ok: false, conflict: true, reason: 'a unique key is taken (ProbeAccount.name="taken")', waited: false });
      native.objCacheClear();
      const names = await transact(async (tx) => Promise.all(['n0', 'n1', 'n3', 'n4', 'n5', 'taken']
        .map(async (n) => (await tx.fetchBy('ProbeAccount', 'name', n))?.get('coins') ?? null)));
      t.deepEqual(names, [0, 1, 3, 4, 5, 5]);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: one group of updates, deletes and checks: each event is decided against the ones before it`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const [x, y, z, w] = await transact((tx) => ['x', 'y', 'z', 'w'].map((n) => tx.create('ProbeAccount', { name: `g_${n}`, coins: 1 }).id));
      // The versions they were created at (each update adds 1).
      const born = await transact(async (tx) => Promise.all([x, y, z, w].map(async (id) => (await tx.fetch('ProbeAccount', id!))!.version)));
      const store = threadStore();
      const txs = Array.from({ length: 6 }, () => new Transaction(store));
      const [a, b, c, d, e, f] = txs as [Transaction, Transaction, Transaction, Transaction, Transaction, Transaction];
      (await a.fetch('ProbeAccount', x!, 'write'))!.set('coins', 10);
      (await b.fetch('ProbeAccount', x!, 'write'))!.set('coins', 20); // read the same version as a
      c.delete((await c.fetch('ProbeAccount', y!))!);
      (await d.fetch('ProbeAccount', y!, 'write'))!.set('coins', 5); // y is deleted by c first
      await e.fetch('ProbeAccount', z!, 'write'); // checked, unchanged
      (await e.fetch('ProbeAccount', w!, 'write'))!.set('coins', 7);
      (await f.fetch('ProbeAccount', z!, 'write'))!.set('coins', 3); // e's check left z's version alone
      const groupsBefore = counter('object_database_stat', `${backend}/commit_groups`);
      const results = await Promise.all(txs.map((tx) => tx.commit()));
      t.is(counter('object_database_stat', `${backend}/commit_groups`) - groupsBefore, 1);
      t.deepEqual(results.map((r) => r.ok), [true, false, true, false, true, true]);
      t.deepEqual(results[1], { ok: false, conflict: true, reason: `ProbeAccount '${x}' changed since it was read`, waited: false });
      native.objCacheClear();
      const after = await transact(async (tx) => Promise.all([x, y, z, w].map(async (id) => {
        const o = await tx.fetch('ProbeAccount', id!);
        return o === null ? null : [o.get('coins'), o.version];
      })));
      t.deepEqual(after, [[10, born[0]! + 1], null, [3, born[2]! + 1], [7, born[3]! + 1]]);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: one group of 70 transfers and a stale one: the conflict drops only the changed object from the cache`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const ids = await transact((tx) => Array.from({ length: 141 }, (_, i) => tx.create('ProbeAccount', { name: `b_${i}`, coins: 100 }).id));
      const born = await transact(async (tx) => Promise.all(ids.map(async (id) => (await tx.fetch('ProbeAccount', id))!.version)));
      const store = threadStore();
      // 70 transfers between distinct pairs, and one that read ids[0] before the first transfer changed it.
      const txs = Array.from({ length: 71 }, () => new Transaction(store));
      for (let i = 0; i < 70; i++) {
        const from = (await txs[i]!.fetch('ProbeAccount', ids[2 * i]!, 'write'))!;
        const to = (await txs[i]!.fetch('ProbeAccount', ids[2 * i + 1]!, 'write'))!;
        from.set('coins', (from.get('coins') as number) - i - 1);
        to.set('coins', (to.get('coins') as number) + i + 1);
      }
      const late = txs[70]!;
      (await late.fetch('ProbeAccount', ids[140]!, 'write'))!.set('coins', 0);
      (await late.fetch('ProbeAccount', ids[0]!, 'write'))!.set('coins', 0);
      const groupsBefore = counter('object_database_stat', `${backend}/commit_groups`);
      const results = await Promise.all(txs.map((tx) => tx.commit()));
      t.is(counter('object_database_stat', `${backend}/commit_groups`) - groupsBefore, 1);
      t.deepEqual(results.map((r) => r.ok), [...Array(70).fill(true), false]);
      t.deepEqual(results[70], { ok: false, conflict: true, reason: `ProbeAccount '${ids[0]}' changed since it was read`, waited: false });
      // The late event's other object was current: its cached copy stays.
      const cachedAfter = await transact((tx) => [ids[140]!, ids[0]!].map((id) => tx.fetchCached('ProbeAccount', id)?.get('coins')));
      t.deepEqual(cachedAfter, [100, 99]);
      native.objCacheClear();
      const stored = await transact(async (tx) => Promise.all(ids.map(async (id) => {
        const o = (await tx.fetch('ProbeAccount', id))!;
        return [o.get('coins'), o.version];
      })));
      const expected = ids.map((_, k) => (k === 140 ? [100, born[k]] : [k % 2 === 0 ? 99 - k / 2 : 100 + (k + 1) / 2, born[k]! + 1]));
      t.deepEqual(stored, expected);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: a read decodes a cached object once per stored version, unless decoded_copies_per_thread is 0`, async (t) => {
    for (const [keep, same] of [[undefined, true], [0, false]] as const) {
      const s = await startObjectServer(await storeArgs(backend, keep === undefined ? {} : { decoded_copies_per_thread: keep }));
      try {
        const id = await transact((tx) => tx.create('ProbeAccount', { name: 'memo', coins: 3 }).id);
        const store = threadStore();
        const type = store.model.type('ProbeAccount');
        const first = store.cached(type, id, true);
        t.is(store.lastShared, same);
        t.is(store.cached(type, id, true) === first, same);
        // A write fetch gets the kept copy marked shared (its handle copies it on the first change).
        const forWrite = store.cached(type, id, false);
        t.is(store.lastShared, same);
        t.is(forWrite === first, same);
        t.is((forWrite as { coins: number }).coins, 3);
        await transact(async (tx) => (await tx.fetch('ProbeAccount', id, 'write'))!.set('coins', 4));
        // A new stored version is decoded again.
        const next = store.cached(type, id, true);
        t.not(next, first);
        t.is((next as { coins: number }).coins, 4);
      } finally {
        await s.stop();
      }
    }
  });

  test.serial(`${backend}: transact runs again on conflict; deletes leave no object behind`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const id = await transact((tx) => tx.create('ProbeAccount', { name: 'c', coins: 1 }).id);
      let runs = 0;
      const reruns = counter('object', 'event_reruns');
      const coins = await transact(async (tx) => {
        runs++;
        const c = (await tx.fetch('ProbeAccount', id, 'write'))!;
        // The first run meets a change committed after its read.
        if (runs === 1) await transact(async (inner) => (await inner.fetch('ProbeAccount', id))!.set('coins', 100));
        c.set('coins', c.get('coins') + 1);
        return c.get('coins');
      });
      t.is(runs, 2);
      t.is(coins, 101);
      t.is(counter('object', 'event_reruns') - reruns, 1);
      await transact(async (tx) => tx.delete((await tx.fetch('ProbeAccount', id))!));
      t.is(await transact((tx) => tx.fetch('ProbeAccount', id)), null);
      native.objCacheClear();
      t.is(await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'c')), null);
      // The name is free again.
      await transact((tx) => tx.create('ProbeAccount', { name: 'c' }));
      t.is((await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'c')))!.get('coins'), 0);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: counters over REST (object, object_database_stat, engine_object_model) and the slow-query line`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend), { CounterService: { warning_threshold_slow_query_in_sec: 0 } });
    try {
      const slow = counter('object_database_stat', `${backend}/slow_queries`);
      await transact((tx) => tx.create('ProbeAccount', { name: 'counted' }));
      const line = await waitFor(() => s.logs().find((l) => l.includes(`Slow query: database=${backend}, query=commit of 1 event(s), time=`)));
      t.regex(line, /time=\d+\.\d{3}s$/);
      t.true(counter('object_database_stat', `${backend}/slow_queries`) > slow);
      const get = async (p: string): Promise<unknown> => (await (await fetch(`${apiUrl(s)}/v1/counters/${p}`)).json());
      const object = await get('object?values=true') as { counters: string[]; values: Record<string, number> };
      t.true(['outstanding_fetch_query', 'outstanding_update_query', 'cached_objects', 'cache_hits', 'cache_misses', 'event_reruns']
        .every((c) => object.counters.includes(c)));
      t.is(object.values.outstanding_fetch_query, 0);
      t.is(object.values.outstanding_update_query, 0);
      t.is(object.values.cached_objects, 1);
      t.deepEqual(await get('engine_object_model/ProbeAccount'), { category: 'engine_object_model', counter: 'ProbeAccount', value: 1 });
      const committed = await get(`object_database_stat/${backend}/committed_events`) as { value: number };
      t.true(committed.value >= 1);
      const mean = await get(`object_database_stat/${backend}/group_size_mean`) as { value: number };
      t.true(mean.value >= 1);
    } finally {
      await s.stop();
    }
  });
}
