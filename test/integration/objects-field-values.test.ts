/**
 * A map field refuses the key `__proto__` (a client's JSON can hold one): decoding a stored map
 * renames that key, so it could not read back as it was set. A field name that is a property
 * of every object (`__proto__`, `constructor`) is no field: `get` refuses it as any unknown name.
 */
import test from 'ava';
import { transact } from '../../src/objects/plugin-api.ts';
import { startObjectServer, storeArgs } from './_objects.ts';

test.serial('sqlite: a map field refuses the key __proto__, and keeps its value', async (t) => {
  const s = await startObjectServer(await storeArgs('sqlite'));
  try {
    const stats = JSON.parse('{"__proto__": 5, "wins": 1}') as Record<string, number>;
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'proto-key', stats: { wins: 2 } }).id);
    const err = await t.throwsAsync(transact(async (tx) => (await tx.fetch('ProbeAccount', id))!.set('stats', stats)));
    t.regex(err!.message, /stats may not have the key '__proto__'/);
    const kept = await transact(async (tx) => (await tx.fetch('ProbeAccount', id))!.get('stats'));
    t.deepEqual(kept, { wins: 2 });
  } finally {
    await s.stop();
  }
});

test.serial("sqlite: get('__proto__') and get('constructor') are refused as unknown fields, and Object.prototype is left alone", async (t) => {
  const s = await startObjectServer(await storeArgs('sqlite'));
  try {
    const fields = 'name, coins, ratio, active, joined, tags, stats, best';
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'proto-field' }).id);
    for (const field of ['nosuch', '__proto__', 'constructor', 'toString']) {
      const err = await t.throwsAsync(transact(async (tx) => (await tx.fetch('ProbeAccount', id))!.get(field as 'name')));
      t.is(err!.message, `ProbeAccount has no field '${field}' (fields: ${fields})`);
    }
    t.false(Object.isFrozen(Object.prototype));
  } finally {
    await s.stop();
  }
});
