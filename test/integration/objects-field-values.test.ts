/**
 * A map field refuses the key `__proto__` (a client's JSON can hold one): decoding a stored map
 * renames that key, so it could not read back as it was set. A field name that is a property
 * of every object (`__proto__`, `constructor`) is no field: `get` refuses it as any unknown name.
 */
import test from 'ava';
import { transact } from '../../src/objects/plugin-api.ts';
import { native } from '../../src/native.ts';
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

/** Reads from the database, not the cache. */
const stored = async <T>(fn: Parameters<typeof transact<T>>[0]): Promise<T> => {
  native.objCacheClear();
  return transact(fn);
};

/** Runs `fn` with an object server on SQLite. */
async function withServer(fn: () => Promise<void>): Promise<void> {
  const s = await startObjectServer(await storeArgs('sqlite'));
  try {
    await fn();
  } finally {
    await s.stop();
  }
}

// A ref holds what an id may be: text with no UTF-8 form read back as three U+FFFD.
test.serial('sqlite: a ref that no object could have as its id (an unpaired surrogate, a NUL, 256 characters) is refused', (t) => withServer(async () => {
  for (const best of ['x\ud800', 'a\0b', 'r'.repeat(256)]) {
    const err = await t.throwsAsync(transact((tx) => tx.create('ProbeAccount', { name: `ref-${best.length}`, best })));
    t.is((err as { code?: string }).code, 'GSF_ERR_OBJECT_VALUE');
    t.regex(err!.message, /best must be an object id \(a non-empty string of at most 255 characters without NUL or unpaired surrogates\) or null, got /);
  }
  const id = await transact((tx) => tx.create('ProbeAccount', { name: 'ref-ok', best: 'r'.repeat(255) }).id);
  t.is(await stored(async (tx) => (await tx.fetch('ProbeAccount', id))!.get('best')), 'r'.repeat(255));
}));

// A value is stored as it was checked: the caller's own array, map or Date changing afterwards
// changes nothing (an integer in an array of strings, an Invalid Date, were committed).
test.serial('sqlite: create keeps a copy of what it checked: the caller changing its array afterwards stores nothing unchecked', (t) => withServer(async () => {
  const tags: unknown[] = ['a'];
  const id = await transact((tx) => {
    const h = tx.create('ProbeAccount', { name: 'alias-array', tags: tags as string[] });
    tags.push(42); // after the check, before the commit
    return h.id;
  });
  t.deepEqual(await stored(async (tx) => (await tx.fetch('ProbeAccount', id))!.get('tags')), ['a']);
  t.false(Object.isFrozen(tags), "the caller's own array is its own");
}));

test.serial("sqlite: set of a datetime keeps a copy: invalidating the caller's Date afterwards stores no Invalid Date", (t) => withServer(async () => {
  const id = await transact((tx) => tx.create('ProbeAccount', { name: 'alias-date' }).id);
  await transact(async (tx) => {
    const a = (await tx.fetch('ProbeAccount', id))!;
    const d = new Date(1000);
    a.set('joined', d);
    d.setTime(NaN); // after the check, before the commit
  });
  t.is((await stored(async (tx) => (await tx.fetch('ProbeAccount', id))!.get('joined'))).getTime(), 1000);
}));
