import test from 'ava';
import { native } from '../../src/native.ts';
import { CloseCode } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer;

test.afterEach.always(async () => {
  await s?.stop();
});

test.serial('login binds one session per account; a second login replaces the first (4009)', async (t) => {
  s = await startSessionServer();
  const a = await s.connect('json');
  const b = await s.connect('msgpack');
  const aId = (await a.request<{ sessionId: number }>('whoami')).sessionId;
  const bId = (await b.request<{ sessionId: number }>('whoami')).sessionId;
  t.is(native.counterReadInt('engine', 'concurrent_user'), 0);
  t.deepEqual(await a.request('login', { account: 'ada' }), { ok: true, replaced: null });
  t.is(native.counterReadInt('engine', 'concurrent_user'), 1);
  t.deepEqual(await b.request('locate', { account: 'ada' }), { session: aId, loggedIn: true });
  t.is(await a.request('account'), 'ada');
  t.deepEqual(await b.request('login', { account: 'ada' }), { ok: true, replaced: aId });
  t.deepEqual(await a.closed, { code: CloseCode.replaced, reason: "account 'ada' logged in from another session" });
  t.deepEqual(await b.request('locate', { account: 'ada' }), { session: bId, loggedIn: true });
  t.is(native.counterReadInt('engine', 'concurrent_user'), 1);
  t.true(await b.request('logout', { account: 'ada' }));
  t.false(await b.request('logout', { account: 'ada' }));
  t.deepEqual(await b.request('locate', { account: 'ada' }), { session: null, loggedIn: false });
  t.is(native.counterReadInt('engine', 'concurrent_user'), 0);
  t.deepEqual(await b.request('login', { account: 'grace' }), { ok: true, replaced: null });
  t.is(native.counterReadInt('engine', 'concurrent_user'), 1);
  await b.close();
  await waitFor(() => native.counterReadInt('engine', 'concurrent_user') === 0, 10000, 'logout on close');
  t.is(activeSessions!.accounts.locate('grace'), null);
});

test.serial('with account_login_policy "refuse" a second login is refused', async (t) => {
  s = await startSessionServer({ SessionService: { account_login_policy: 'refuse' } });
  const a = await s.connect('json');
  const b = await s.connect('json');
  const aId = (await a.request<{ sessionId: number }>('whoami')).sessionId;
  t.deepEqual(await a.request('login', { account: 'ada' }), { ok: true, replaced: null });
  t.deepEqual(await b.request('login', { account: 'ada' }), { ok: false, reason: 'already_logged_in', sessionId: aId });
  t.true(a.open);
  t.is(await b.request('account'), null);
  await a.close();
  await b.close();
});
