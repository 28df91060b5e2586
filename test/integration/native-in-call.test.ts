/**
 * What the addon answers inside a native call (native/binding/in_call_answers.h): a native
 * handler's account_of from the process's session accounts, and its object fetches for write
 * from the cache, with the continuation run in the same call. Over real sessions and the real
 * object store: the answers match the account manager's and the store's, the ordering guards
 * hold, and the session accounts follow logins, logouts, closes and the server's stop.
 */
import path from 'node:path';
import test from 'ava';
import type { GsfClient } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { threadStore } from '../../src/objects/thread-store.ts';
import { Transaction } from '../../src/objects/transaction.ts';
import { encodeFields } from '../../src/objects/model.ts';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer } from './_session.ts';
import { arenaPlugins } from './_arena-games.ts';
import { startObjectServer, storeArgs } from './_objects.ts';

const sessionNative = path.join(fixtures, 'native-plugins', 'session-native');

interface AccountResult { op: number; found: boolean; login: number; session: number; account: string }

const answers = (): number => native.counterValue('engine', 'native_account_answers') ?? 0;

async function whoami(c: GsfClient): Promise<number> {
  return (await c.request<{ sessionId: number }>('whoami')).sessionId;
}

/** The sn.result frames a request brings (`count` of them), in order. */
async function results(c: GsfClient, type: string, body: unknown, count = 1): Promise<AccountResult[]> {
  const out: AccountResult[] = [];
  const all = new Promise<void>((resolve) => {
    const off = c.on<AccountResult>('sn.result', (b) => {
      out.push(b);
      if (out.length === count) {
        off();
        resolve();
      }
    });
  });
  await c.request(type, body);
  await all;
  return out;
}

test.serial('account_of is answered inside the call from the session accounts, which follow logins, logouts and closes', async (t) => {
  const base = native.sessionAccountCount();
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } }, ['session-probe', sessionNative]);
  try {
    const a = await s.connect('json');
    const b = await s.connect('msgpack');
    const [aId, bId] = [await whoami(a), await whoami(b)];
    t.deepEqual(await results(a, 'sn.login', { account: 'ada' }), [{ op: 0, found: true, login: 0, session: 0, account: 'ada' }]);
    t.is(native.sessionAccountCount(), base + 1);
    let before = answers();
    t.deepEqual(await results(b, 'sn.whose', { session: aId }), [{ op: 3, found: true, login: 0, session: aId, account: 'ada' }]);
    t.is(answers() - before, 1, 'answered inside the call');
    // A session nobody logged in on goes to the account manager (it may be logged in elsewhere in a cluster).
    before = answers();
    t.deepEqual(await results(a, 'sn.whose', { session: bId }), [{ op: 3, found: false, login: 0, session: bId, account: '' }]);
    t.is(answers() - before, 0);
    // A logout earlier in the same call goes first: the account of the session is asked after it.
    before = answers();
    t.deepEqual(await results(b, 'sn.logout_whose', { account: 'ada', session: aId }, 2), [
      { op: 1, found: true, login: 0, session: 0, account: 'ada' },
      { op: 3, found: false, login: 0, session: aId, account: '' },
    ]);
    t.is(answers() - before, 0);
    t.is(native.sessionAccountCount(), base);
    // A replacing login moves the account; a closed session leaves the table.
    await results(a, 'sn.login', { account: 'ada' });
    await results(b, 'sn.login', { account: 'ada' });
    t.is((await a.closed).code, 4009);
    t.deepEqual(await results(b, 'sn.whose', { session: aId }), [{ op: 3, found: false, login: 0, session: aId, account: '' }]);
    t.deepEqual(await results(b, 'sn.whose', { session: bId }), [{ op: 3, found: true, login: 0, session: bId, account: 'ada' }]);
    t.is(native.sessionAccountCount(), base + 1);
    const c = await s.connect('json');
    await results(c, 'sn.login', { account: 'grace' });
    t.is(native.sessionAccountCount(), base + 2);
    await c.close();
    await waitFor(() => native.sessionAccountCount() === base + 1, 5000, 'the closed session to leave the session accounts');
    t.pass();
  } finally {
    await s.stop();
  }
  t.is(native.sessionAccountCount(), base, "a stopped server's logins leave the session accounts");
});

test.serial("the C++ game's clicks fetch the player for write inside the call, and keep every point", async (t) => {
  const s = await startSessionServer({}, arenaPlugins('native'));
  try {
    const c = await s.connect('json');
    await c.request('hello', { name: 'incall' });
    const writes = native.counterValue('object', 'native_cached_writes') ?? 0;
    const accounts = answers();
    const scores: number[] = [];
    for (let i = 0; i < 12; i++) scores.push((await c.request<{ score: number }>('click')).score);
    t.deepEqual(scores, Array.from({ length: 12 }, (_, i) => i + 1));
    // The hello's player was committed into the cache: every click finds it there.
    t.is((native.counterValue('object', 'native_cached_writes') ?? 0) - writes, 12);
    t.is(answers() - accounts, 12);
    const profile = await c.request<{ score: number; character: { level: number } }>('profile');
    t.is(profile.score, 12);
    t.is(profile.character.level, 2, 'the character fetched after the player (through JavaScript) levelled up at 10');
    await c.close();
  } finally {
    await s.stop();
  }
});

test.serial('an object held from the cache commits at the version the handler saw, and conflicts when it changed since', async (t) => {
  const s = await startObjectServer(await storeArgs('sqlite'));
  try {
    const setup = new Transaction(threadStore());
    const id = setup.create('ProbeAccount', { name: 'held', coins: 1 }).id;
    t.deepEqual(await setup.commit(), { ok: true });
    const read = new Transaction(threadStore());
    const seen = (await read.fetch('ProbeAccount', id))!;
    const stored = encodeFields(Object.fromEntries(Object.entries(seen.toJSON()).filter(([k]) => k !== 'id')) as never);
    const version = seen.version;

    const tx = new Transaction(threadStore());
    const h = tx.heldFromCache('ProbeAccount', id, version, stored);
    t.is(h.get('name'), 'held');
    t.true(h.forWrite);
    t.deepEqual(tx.stats, { created: 0, fetched: 1, cacheHits: 1, nonexistent: 0, readMode: 0 });
    t.is(t.throws(() => tx.heldFromCache('ProbeAccount', id, version, stored))!.message, `ProbeAccount '${id}' is already held by this event`);
    h.set('coins', 2);
    t.deepEqual(await tx.commit(), { ok: true });

    // Held at the version before that commit: the commit finds it gone.
    const stale = new Transaction(threadStore());
    stale.heldFromCache('ProbeAccount', id, version, stored).set('coins', 99);
    const result = await stale.commit();
    t.is(result.ok, false);
    t.true(!result.ok && result.conflict);
    const check = new Transaction(threadStore());
    t.is((await check.fetch('ProbeAccount', id))!.get('coins'), 2);
  } finally {
    await s.stop();
  }
});
