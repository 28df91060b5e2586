/**
 * A map field refuses the key `__proto__` (a client's JSON can hold one): decoding a stored map
 * renames that key, so it could not read back as it was set.
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
