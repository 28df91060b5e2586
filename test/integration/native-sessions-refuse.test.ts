/**
 * A native account login under `account_login_policy: "refuse"` (a server of its own): the
 * second login of an account is refused with the session that holds it, as a managed login is.
 */
import path from 'node:path';
import test from 'ava';
import type { GsfClient } from '../../src/sdk/index.ts';
import { fixtures } from './_server.ts';
import { startSessionServer } from './_session.ts';

const sessionNative = path.join(fixtures, 'native-plugins', 'session-native');

interface AccountResult { op: number; found: boolean; login: number; session: number; account: string }

async function ask(c: GsfClient, type: string, body: unknown): Promise<AccountResult> {
  const next = c.next<AccountResult>('sn.result');
  await c.request(type, body);
  return (await next).body!;
}

test.serial('with account_login_policy "refuse", a second login answers already logged in, as the managed login does', async (t) => {
  const r = await startSessionServer({ SessionService: { account_login_policy: 'refuse' } }, ['session-probe', sessionNative]);
  try {
    const a = await r.connect('json');
    const b = await r.connect('msgpack');
    const { sessionId: aId } = await a.request<{ sessionId: number }>('whoami');
    t.deepEqual(await ask(a, 'sn.login', { account: 'turing' }), { op: 0, found: true, login: 0, session: 0, account: 'turing' });
    t.deepEqual(await ask(b, 'sn.login', { account: 'turing' }), { op: 0, found: false, login: 1, session: aId, account: 'turing' });
    t.deepEqual(await b.request('login', { account: 'turing' }), { ok: false, reason: 'already_logged_in', sessionId: aId });
    t.is(a.open, true);
    await Promise.all([a.close(), b.close()]);
  } finally {
    await r.stop();
  }
});
