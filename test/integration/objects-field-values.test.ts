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

test.serial('sqlite: text with an unpaired surrogate is refused in a string field, an array of strings and a map key; nothing changes', async (t) => {
  const s = await startObjectServer(await storeArgs('sqlite'));
  try {
    const owner = await transact((tx) => tx.create('ProbeAccount', { name: 'lone-owner', tags: ['a'], stats: { wins: 1 } }).id);
    const item = await transact((tx) => tx.create('ProbeItem', { owner, kind: 'sword', serial: 1 }).id);
    // A store keeps text as UTF-8, where each of these would read back as U+FFFD: two map keys
    // would become one.
    const kind = await t.throwsAsync(transact(async (tx) => (await tx.fetch('ProbeItem', item))!.set('kind', 'a\ud800b')));
    t.is(kind!.message, 'ProbeItem.kind must be text without unpaired UTF-16 surrogates (no UTF-8 form), got "a\\ud800b"');
    const created = await t.throwsAsync(transact((tx) => tx.create('ProbeItem', { owner, kind: '\udc00', serial: 2 }).id));
    t.is(created!.message, 'ProbeItem.kind must be text without unpaired UTF-16 surrogates (no UTF-8 form), got "\\udc00"');
    const tags = await t.throwsAsync(transact(async (tx) => (await tx.fetch('ProbeAccount', owner))!.set('tags', ['ok', 'x\ud83d'])));
    t.is(tags!.message, 'ProbeAccount.tags [1] must be text without unpaired UTF-16 surrogates (no UTF-8 form), got "x\\ud83d"');
    const stats = await t.throwsAsync(transact(async (tx) => (await tx.fetch('ProbeAccount', owner))!.set('stats', { 'k\ud800': 1, 'k\ud801': 2 })));
    t.is(stats!.message, 'ProbeAccount.stats may not have a key with an unpaired UTF-16 surrogate (no UTF-8 form), got "k\\ud800"');
    // An id holding one names no object: a fetch finds none, a create is refused.
    t.is(await transact(async (tx) => tx.fetch('ProbeItem', 'id\ud800')), null);
    await t.throwsAsync(transact((tx) => tx.create('ProbeItem', { owner, kind: 'axe', serial: 3 }, { id: 'id\ud800' }).id),
      { message: 'ProbeItem id must be a non-empty string of at most 255 characters without NUL or unpaired surrogates, got "id\\ud800"' });
    // A pair is text like any other, and what was there is kept.
    await transact(async (tx) => (await tx.fetch('ProbeItem', item))!.set('kind', 'blade \ud83d\ude00'));
    const read = await transact(async (tx) => {
      const [i, a] = [(await tx.fetch('ProbeItem', item))!, (await tx.fetch('ProbeAccount', owner))!];
      return { kind: i.get('kind'), tags: a.get('tags'), stats: a.get('stats') };
    });
    t.deepEqual(read, { kind: 'blade \ud83d\ude00', tags: ['a'], stats: { wins: 1 } });
  } finally {
    await s.stop();
  }
});
