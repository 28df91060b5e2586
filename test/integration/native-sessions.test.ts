/**
 * Sessions and accounts of native plugins (ABI 1.2), over real WebSocket sessions: the session
 * hooks, join / leave / publish, close, broadcast, and account login, logout, locate and the
 * account of a session, each answered as the managed `api.accounts` (session-probe) answers;
 * every refused argument fails the call with its status and set_error text.
 */
import path from 'node:path';
import test from 'ava';
import { GsfRequestError, ProtocolError, type GsfClient } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const sessionNative = path.join(fixtures, 'native-plugins', 'session-native');
const accountReads = path.join(fixtures, 'native-plugins', 'account-reads');

interface Opened { session: number; event_session: number; kind: number; name: string; version: string; codec: string; address: boolean }
interface Closed { session: number; event_session: number; code: number; reason: string; account: string | null; name: string }
interface AccountResult { op: number; found: boolean; login: number; session: number; account: string }

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } }, ['session-probe', sessionNative, accountReads]);
});
test.after.always(async () => {
  await s?.stop();
});

/** A client, the sn.opened frames it got, and its session id. */
async function connect(codec: 'json' | 'msgpack' = 'json'): Promise<{ c: GsfClient; id: number; opened: Opened[]; lines: string[] }> {
  const c = await s.connect(codec);
  const opened: Opened[] = [];
  const lines: string[] = [];
  c.on<Opened>('sn.opened', (b) => opened.push(b));
  c.on<{ text: string }>('sn.line', (b) => lines.push(b.text));
  // The opened hook runs before the session's first message: its frame precedes this reply.
  const { sessionId } = await c.request<{ sessionId: number }>('whoami');
  return { c, id: sessionId, opened, lines };
}

async function ask(c: GsfClient, type: string, body: unknown): Promise<AccountResult> {
  const next = c.next<AccountResult>('sn.result');
  await c.request(type, body);
  return (await next).body!;
}

async function failure(request: Promise<unknown>): Promise<string> {
  try {
    await request;
  } catch (err) {
    if (err instanceof GsfRequestError) return err.code;
    throw err;
  }
  throw new Error('the request succeeded');
}

test.serial('the opened hook runs once per session with its id; the closed hook once with the code, reason and account', async (t) => {
  const watcher = await connect('json');
  const closed: Closed[] = [];
  watcher.c.on<Closed>('sn.closed', (b) => closed.push(b));
  await watcher.c.request('sn.join', { group: 'watchers' });
  t.deepEqual(watcher.opened, [{
    session: watcher.id, event_session: watcher.id, kind: 3, name: '_session_opened', version: '1.0.0', codec: 'json', address: true,
  }]);
  const a = await connect('msgpack');
  const b = await connect('json');
  t.deepEqual(a.opened.map((o) => [o.session, o.event_session, o.codec]), [[a.id, a.id, 'msgpack']]);
  t.deepEqual(b.opened.map((o) => o.session), [b.id]);
  t.deepEqual((await ask(a.c, 'sn.login', { account: 'ada' })).found, true);
  await a.c.close();
  await waitFor(() => closed.find((x) => x.session === a.id));
  await b.c.close();
  await waitFor(() => closed.find((x) => x.session === b.id));
  const ofA = closed.filter((x) => x.session === a.id);
  t.deepEqual(ofA, [{ session: a.id, event_session: a.id, code: 1000, reason: '', account: 'ada', name: '_session_closed' }]);
  t.deepEqual(closed.filter((x) => x.session === b.id).map((x) => x.account), [null]);
  t.is(watcher.opened.length, 1, 'no other session\'s opened frame reached the watcher');
  await watcher.c.close();
});

test.serial('join, leave and publish reach exactly the sessions in the group; broadcast reaches the named ones or all', async (t) => {
  const a = await connect('json');
  const b = await connect('msgpack');
  const c = await connect('json');
  await a.c.request('sn.join', { group: 'room' });
  await a.c.request('sn.join', { group: 'room', session: b.id }); // another session
  await a.c.request('sn.publish', { group: 'room', text: 'one' });
  await a.c.request('sn.leave', { group: 'room', session: b.id });
  await a.c.request('sn.publish', { group: 'room', text: 'two' });
  // Frames of one session's events leave in order: 'end' comes after everything before it.
  await a.c.request('sn.broadcast', { sessions: [a.id, b.id, c.id], text: 'end' });
  await waitFor(() => [a, b, c].every((x) => x.lines.includes('end')));
  t.deepEqual(a.lines, ['one', 'two', 'end']);
  t.deepEqual(b.lines, ['one', 'end']);
  t.deepEqual(c.lines, ['end']);
  await c.c.request('sn.broadcast', { sessions: [b.id], text: 'only b' });
  await c.c.request('sn.broadcast', { text: 'everyone' });
  await waitFor(() => [a, b, c].every((x) => x.lines.includes('everyone')));
  t.deepEqual(a.lines.slice(3), ['everyone']);
  t.deepEqual(b.lines.slice(2), ['only b', 'everyone']);
  t.deepEqual(c.lines.slice(1), ['everyone']);
  await Promise.all([a.c.close(), b.c.close(), c.c.close()]);
});

test.serial('close closes with 4010 and the reason, after the frames the call sent before', async (t) => {
  const a = await connect('json');
  const b = await connect('msgpack');
  await a.c.request('sn.close', { session: b.id, reason: 'kicked by a native plugin' });
  t.deepEqual(await b.c.closed, { code: 4010, reason: 'kicked by a native plugin' });
  a.c.send('sn.send_close', { text: 'last words' });
  t.deepEqual(await a.c.closed, { code: 4010, reason: 'after the line' });
  t.deepEqual(a.lines, ['last words']);
});

test.serial('accounts: login, logout, locate and the account of a session answer as the managed API does', async (t) => {
  const kept = native.counterValue('session_native', 'kept') ?? 0;
  const drops = native.counterValue('session_native', 'drops') ?? 0;
  const a = await connect('json');
  const b = await connect('msgpack');
  const c = await connect('json');
  t.deepEqual(await ask(a.c, 'sn.login', { account: 'grace' }), { op: 0, found: true, login: 0, session: 0, account: 'grace' });
  t.deepEqual(await a.c.request('locate', { account: 'grace' }), { session: a.id, loggedIn: true }, 'the managed API sees the login');
  t.deepEqual(await ask(c.c, 'sn.locate', { account: 'grace' }), { op: 2, found: true, login: 0, session: a.id, account: 'grace' });
  t.deepEqual(await ask(c.c, 'sn.whose', { session: a.id }), { op: 3, found: true, login: 0, session: a.id, account: 'grace' });
  // A second login of the account replaces the first session (account_login_policy "replace").
  t.deepEqual(await ask(b.c, 'sn.login', { account: 'grace' }), { op: 0, found: true, login: 0, session: a.id, account: 'grace' });
  t.is((await a.c.closed).code, 4009);
  t.is(await b.c.request('account'), 'grace', 'the managed accountOf agrees');
  t.deepEqual(await ask(c.c, 'sn.logout', { account: 'grace' }), { op: 1, found: true, login: 0, session: 0, account: 'grace' });
  t.deepEqual(await ask(c.c, 'sn.logout', { account: 'grace' }), { op: 1, found: false, login: 0, session: 0, account: 'grace' });
  t.deepEqual(await ask(c.c, 'sn.locate', { account: 'grace' }), { op: 2, found: false, login: 0, session: 0, account: 'grace' });
  t.deepEqual(await ask(c.c, 'sn.whose', { session: b.id }), { op: 3, found: false, login: 0, session: b.id, account: '' });
  t.is(b.c.open, true, 'logout leaves the session open');
  // Another session's login, and a session that is gone.
  t.deepEqual(await ask(b.c, 'sn.login', { account: 'hopper', session: c.id }), { op: 0, found: true, login: 0, session: 0, account: 'hopper' });
  t.is(await c.c.request('account'), 'hopper');
  t.deepEqual(await ask(b.c, 'sn.login', { account: 'lovelace', session: a.id }), { op: 0, found: false, login: 2, session: 0, account: 'lovelace' });
  // Every continuation's user data was released exactly once.
  t.is(native.counterValue('session_native', 'kept'), kept + 10);
  t.is(await waitFor(() => (native.counterValue('session_native', 'drops') === drops + 10 ? true : null)), true);
  t.is(native.pluginAccountContinuations(), 0);
  await Promise.all([b.c.close(), c.c.close()]);
});

const refused: Array<[string, string, string]> = [
  ['join_zero', 'INVALID_ARGUMENT', 'session_join: session id must be a positive integer below 2^53 (got 0)'],
  ['join_big', 'INVALID_ARGUMENT', 'session_join: session id must be a positive integer below 2^53 (got 9007199254740992)'],
  ['join_empty_group', 'INVALID_ARGUMENT', 'session_join: group must be non-empty UTF-8'],
  ['leave_bad_utf8', 'INVALID_ARGUMENT', 'session_leave: group must be non-empty UTF-8'],
  ['leave_null_group', 'INVALID_ARGUMENT', 'session_leave: group must be non-empty UTF-8'],
  ['close_zero', 'INVALID_ARGUMENT', 'session_close: session id must be a positive integer below 2^53 (got 0)'],
  ['close_bad_reason', 'INVALID_ARGUMENT', 'session_close: reason must be UTF-8'],
  ['close_null_reason', 'INVALID_ARGUMENT', 'session_close: reason must be UTF-8'],
  ['broadcast_null_ids', 'INVALID_ARGUMENT', 'broadcast: session_ids is NULL but count is 2'],
  ['broadcast_bad_id', 'INVALID_ARGUMENT', 'broadcast: session id must be a positive integer below 2^53 (got 0) at index 1'],
  ['broadcast_empty_type', 'INVALID_ARGUMENT', 'broadcast: message type must be a non-empty UTF-8 string'],
  ['reply_null_body', 'INVALID_ARGUMENT', 'reply: body is NULL but its length is not 0'],
  ['send_null_body', 'INVALID_ARGUMENT', 'send: body is NULL but its length is not 0'],
  ['publish_null_body', 'INVALID_ARGUMENT', 'publish: body is NULL but its length is not 0'],
  ['invoke_null_payload', 'INVALID_ARGUMENT', 'invoke: payload is NULL but its length is not 0'],
  ['timer_null_payload', 'INVALID_ARGUMENT', 'timer_after: payload is NULL but its length is not 0'],
  ['login_empty_account', 'INVALID_ARGUMENT', 'account_login: account id must be non-empty UTF-8'],
  ['login_big_session', 'INVALID_ARGUMENT', 'account_login: session id must be a positive integer below 2^53 (got 9007199254740992)'],
  ['logout_bad_utf8', 'INVALID_ARGUMENT', 'account_logout: account id must be non-empty UTF-8'],
  ['locate_no_then', 'INVALID_ARGUMENT', 'account_locate: no continuation'],
  ['whose_zero', 'INVALID_ARGUMENT', 'account_of_session: session id must be a positive integer below 2^53 (got 0)'],
  ['whose_no_then', 'INVALID_ARGUMENT', 'account_of_session: no continuation'],
  ['register_outside_init', 'UNAVAILABLE', 'register_session_opened: hooks are registered during init only'],
];

test.serial('a logout an earlier message sent, not waited for, is seen by the next message\'s account_of', async (t) => {
  // A session's messages run in order, on either event thread. The logout nobody waits for
  // keeps its event until the account manager has it, so the next message's account_of, whether
  // answered inside the call from the addon's copy of the logins or by the account manager over
  // the other thread's channel, comes after it.
  const c = await s.connect('json');
  const stale: number[] = [];
  for (let i = 0; i < 20; i++) {
    const account = `reads-${i}`;
    t.deepEqual(await c.request('login', { account }), { ok: true, replaced: null });
    const logout = c.request('ar.logout_nowait', { account });
    const whose = c.request<{ found: boolean; account: string }>('ar.whose');
    await logout;
    if ((await whose).found) stale.push(i);
  }
  t.deepEqual(stale, [], 'rounds whose account_of answered the account logged out of');
  await c.close();
});

test.serial('every refused argument fails the call with its status and set_error text', async (t) => {
  const a = await connect('msgpack');
  for (const [name, status, text] of refused) {
    // One message type per case: failure lines are rate-limited per handler.
    t.is(await failure(a.c.request(`sn.bad.${name}`)), ProtocolError.handlerFailed, name);
    const line = await waitFor(() => s.logs().find((l) => l.includes(`'sn.bad.${name}'`)), 10000, name);
    t.true(line.includes(`plugin 'session-native' message handler 'sn.bad.${name}' failed: ${status}: ${text} {`), line);
  }
  // A body that is not msgpack names the encoder's complaint.
  t.is(await failure(a.c.request('sn.bad.broadcast_bad_body')), ProtocolError.handlerFailed);
  t.regex(await waitFor(() => s.logs().find((l) => l.includes("'sn.bad.broadcast_bad_body'"))), /failed: INVALID_ARGUMENT: broadcast: .+ \{/);
  t.deepEqual(await a.c.request('whoami').then((w) => typeof (w as { sessionId: number }).sessionId), 'number', 'the session stays open');
  await a.c.close();
});

test.serial('a failing opened hook is logged once, naming the plugin, the hook and the session', async (t) => {
  const asker = await s.connect();
  await asker.request('sn.fail_next_open');
  const c = await s.connect();
  const { sessionId } = await c.request<{ sessionId: number }>('whoami');
  const line = await waitFor(() => s.logs().find((l) => l.includes(`'session ${sessionId}' failed`)), 10000, 'the hook failure line');
  t.is(line.slice(line.indexOf('] ') + 2), `GSF_ERR_HANDLER_FAILED: plugin 'session-native' session-opened hook 'session ${sessionId}' failed: `
    + `PERMISSION_DENIED: the opened hook was asked to fail {"event_name":"_session_opened","event_id":${/"event_id":(\d+)/.exec(line)![1]},"event_tag":${sessionId}}`);
  asker.close();
  c.close();
});
