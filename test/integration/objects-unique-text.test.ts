/**
 * A unique string key holds text a database's text column stores as given: a value with a NUL
 * or an unpaired surrogate (a client's JSON can hold either; PostgreSQL refuses NUL and turns
 * lone surrogates into U+FFFD, so two such names would be one key) is refused where it is set,
 * on either store, and a lookup of one finds no object.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { transact } from '../../src/objects/plugin-api.ts';
import { postgresInstalled } from './_postgres.ts';
import { startObjectServer, stopPostgres, storeArgs, type Backend } from './_objects.ts';

test.after.always(stopPostgres);

const backends: Backend[] = postgresInstalled() ? ['sqlite', 'postgresql'] : ['sqlite'];

for (const backend of backends) {
  test.serial(`${backend}: a unique name with a NUL or an unpaired surrogate is refused; a lookup of one finds none`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      for (const name of ['ada\u0000lovelace', 'ada\ud800', 'ada\udbff', '\udc00ada']) {
        const err = await t.throwsAsync(transact((tx) => tx.create('ProbeAccount', { name }).id));
        t.regex(err!.message, /ProbeAccount\.name is a unique key: it must be text without NUL or unpaired surrogates/);
        t.is(await transact(async (tx) => tx.fetchBy('ProbeAccount', 'name', name)), null);
      }
      // A set after the create is refused the same way, and the object keeps its name.
      const id = await transact((tx) => tx.create('ProbeAccount', { name: 'grace \ud83d\ude00' }).id);
      await t.throwsAsync(transact(async (tx) => (await tx.fetch('ProbeAccount', id))!.set('name', 'grace\u0000')), { message: /unique key/ });
      const found = await transact(async (tx) => (await tx.fetchBy('ProbeAccount', 'name', 'grace \ud83d\ude00'))?.id ?? null);
      t.is(found, id);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: a unique name is at most 2048 bytes of UTF-8; a longer one is refused where it is set`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      // Random text: PostgreSQL's index refuses a row past 2,704 bytes it cannot compress.
      const longest = randomBytes(1024).toString('hex');
      const id = await transact((tx) => tx.create('ProbeAccount', { name: longest }).id);
      t.is(await transact(async (tx) => (await tx.fetchBy('ProbeAccount', 'name', longest))?.id ?? null), id);
      const over = `${randomBytes(1024).toString('hex').slice(0, 2046)}éé`;
      const err = await t.throwsAsync(transact((tx) => tx.create('ProbeAccount', { name: over }).id));
      t.is(err!.message, 'ProbeAccount.name is a unique key: it must be at most 2048 bytes of UTF-8, got 2050');
      await t.throwsAsync(transact(async (tx) => (await tx.fetch('ProbeAccount', id))!.set('name', over)), { message: /at most 2048 bytes/ });
      // A lookup of a longer name is no mistake: it finds none.
      t.is(await transact(async (tx) => tx.fetchBy('ProbeAccount', 'name', over)), null);
      t.is(await transact(async (tx) => (await tx.fetch('ProbeAccount', id))!.get('name')), longest);
    } finally {
      await s.stop();
    }
  });
}
