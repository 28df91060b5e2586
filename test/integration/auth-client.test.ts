/**
 * The in-process AuthenticationClient (`api.auth`) against a real agent process and the fake
 * platforms: callback, promise and sync forms, on event workers.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import {
  authenticationRequest, makeMicroblogAuthenticationKey, makeSocialnetAuthenticationKey, makeTestAuthenticationKey,
  makeIpAddressAuthenticationKey, type AuthenticationRequest,
} from '../../src/index.ts';
import { startFakeSocialnet, type FakeSocialnet } from '../fixtures/platforms/socialnet.ts';
import { startFakeMicroblog, type FakeMicroblog } from '../fixtures/platforms/microblog.ts';
import type { Ask, AskRecord } from '../fixtures/plugins/auth-probe/index.ts';
import { startTestServer, waitFor, type TestServer } from './_server.ts';
import { startAgentProcess, type AgentProcess } from './_auth.ts';
import { native } from '../../src/native.ts';

let sn: FakeSocialnet;
let mb: FakeMicroblog;
let agent: AgentProcess;
let srv: TestServer;
let n = 0;

test.before(async () => {
  sn = await startFakeSocialnet({ tokens: { 'sn-alice': { user: '100' }, 'sn-bob': { user: '200' } }, friends: { 100: ['101', '102', '103'] } });
  mb = await startFakeMicroblog({ tokens: { 'mb-alice': { secret: 'mb-secret', user: '5001' } }, friends: { 5001: ['6001', '6002', '6003'] } });
  agent = await startAgentProcess({
    socialnet_base_url: sn.url, socialnet_app_id: sn.appId, socialnet_app_secret: sn.appSecret,
    microblog_base_url: mb.url, microblog_consumer_key: mb.consumerKey, microblog_consumer_secret: 'cs-secret',
  });
  srv = await startTestServer({
    EventDispatcher: { event_threads_size: 2 },
    AuthenticationClient: { use_authenticator: true, remote_authenticator_ip_address: '127.0.0.1', remote_authenticator_port: agent.port },
  }, ['auth-probe']);
});

test.after.always(async () => {
  await srv?.stop();
  await agent?.stop();
  await sn?.close();
  await mb?.close();
});

/** Invokes `auth_probe.ask` and waits for its record. */
async function ask(form: Ask['form'], kind: Ask['kind'], request: AuthenticationRequest, oddContext = false): Promise<AskRecord> {
  const label = `ask-${++n}`;
  const file = path.join(srv.dir, `${label}.jsonl`);
  const tag = 7_000_000 + n;
  srv.server.invoke('auth_probe.ask', { file, label, form, kind, request, oddContext } satisfies Ask, { tag, name: `auth_probe.ask.${form}` });
  const line = await waitFor(() => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : ''), 20000, label);
  const record = JSON.parse(line) as AskRecord;
  if (form !== 'callback') {
    if (record.tag !== tag) throw new Error(`${label} ran with tag ${record.tag}`);
  }
  return record;
}

const alice = () => authenticationRequest('socialnet', '100', makeSocialnetAuthenticationKey('sn-alice'));
const ok = { success: true, reason_code: 0, reason_description: '' };

test.serial('callback form: the answer runs as an engine event with a random tag and the caller\'s context', async (t) => {
  const r = await ask('callback', 'authentication', alice());
  t.deepEqual(r.response, ok);
  t.false(r.error);
  t.is(r.kind, 'engine');
  t.is(r.name, 'auth_probe.answer');
  t.not(r.tag, r.askTag);
  t.true(r.tag >= 2 ** 32, 'a random tag');
  t.not(r.thread, threadId, 'ran on an event worker');
  t.deepEqual(r.context, { request: alice() });
  const again = await ask('callback', 'authentication', authenticationRequest('test', 'anyone', makeTestAuthenticationKey()));
  t.deepEqual(again.response, ok);
  t.not(again.tag, r.tag);
});

test.serial('callback form: a context that cannot be encoded is refused by the call, not lost with the answer', async (t) => {
  const r = await ask('callback', 'authentication', alice(), true);
  t.deepEqual([r.tag, r.error, r.error_code], [r.askTag, true, 'GSF_ERR_BAD_ARGUMENT']);
  t.is(r.response, 'authenticate: context cannot be encoded (Unknown type: symbol)');
});

test.serial('a forged or another user\'s token is a failed authentication, not a system error, in every form', async (t) => {
  const forged = authenticationRequest('socialnet', '100', makeSocialnetAuthenticationKey('forged'));
  const bob = authenticationRequest('socialnet', '100', makeSocialnetAuthenticationKey('sn-bob'));
  for (const form of ['callback', 'async', 'sync'] as const) {
    const f = await ask(form, 'authentication', forged);
    t.deepEqual(f.response, { success: false, reason_code: 1, reason_description: 'access token is not valid' }, form);
    t.false(f.error, form);
    const b = await ask(form, 'authentication', bob);
    t.deepEqual(b.response, { success: false, reason_code: 1, reason_description: 'access token belongs to another user' }, form);
    t.false(b.error, form);
  }
});

// docs/guides/authenticator.md: only trouble reaching the agent is a system error (which a game
// may retry); a request the client cannot send is a bad argument, in every form.
test.serial('personal info for the ipaddress platform is a bad argument in every form, never a system error', async (t) => {
  const ip = authenticationRequest('ipaddress', 'p1', makeIpAddressAuthenticationKey('1.2.3.4'));
  const message = 'personal info is not available for platform ipaddress';
  for (const form of ['callback', 'async', 'sync'] as const) {
    const r = await ask(form, 'personalinfo', ip);
    // The callback form throws in the asking event itself: no answer event runs.
    t.deepEqual([r.tag, r.error, r.error_code, form === 'async' ? message : r.response], [r.askTag, true, 'GSF_ERR_BAD_ARGUMENT', message], form);
  }
});

// The agent refuses a body past its max_body_bytes (65536 here) with 413: the same request gets
// the same answer again, so it is a failed request (incorrect parameters), not a system error.
test.serial('a request larger than the agent takes is a failed request with reason 2 in every form, not a system error', async (t) => {
  const huge = authenticationRequest('socialnet', '100', makeSocialnetAuthenticationKey('x'.repeat(70_000)));
  const refused = { success: false, reason_code: 2, reason_description: 'the request is larger than the agent takes (HTTP 413; its max_body_bytes)' };
  for (const form of ['callback', 'async', 'sync'] as const) {
    const r = await ask(form, 'authentication', huge);
    t.deepEqual([r.error, r.response], [false, refused], form);
  }
  t.deepEqual((await ask('async', 'personalinfo', huge)).response, { ...refused, friends: [] });
});

test.serial('promise form inside an event: socialnet, microblog, IP and test platforms', async (t) => {
  t.deepEqual((await ask('async', 'authentication', alice())).response, ok);
  const mbReq = authenticationRequest('microblog', '5001', makeMicroblogAuthenticationKey('mb-alice', 'mb-secret'));
  t.deepEqual((await ask('async', 'authentication', mbReq)).response, ok);
  t.deepEqual((await ask('async', 'authentication', authenticationRequest('microblog', '5001', makeMicroblogAuthenticationKey('mb-alice', 'wrong')))).response,
    { success: false, reason_code: 1, reason_description: 'access token is not valid' });
  t.deepEqual((await ask('async', 'authentication', authenticationRequest('ipaddress', 'p1', makeIpAddressAuthenticationKey('198.51.100.7')))).response, ok);
  t.deepEqual((await ask('async', 'authentication', authenticationRequest('ipaddress', 'p1', makeIpAddressAuthenticationKey('nope')))).response,
    { success: false, reason_code: 2, reason_description: 'ip is not a valid IPv4 or IPv6 address' });
  const r = await ask('async', 'authentication', authenticationRequest('test', 'p2'));
  t.deepEqual(r.response, ok);
  t.is(r.kind, 'user');
});

test.serial('sync form blocks only its worker and returns the response', async (t) => {
  const r = await ask('sync', 'authentication', alice());
  t.deepEqual(r.response, ok);
  t.false(r.error);
  t.not(r.thread, threadId);
  t.is(r.error_code, undefined);
  const mbReq = authenticationRequest('microblog', '5001', makeMicroblogAuthenticationKey('mb-alice', 'mb-secret'));
  t.deepEqual((await ask('sync', 'authentication', mbReq)).response, ok);
  t.deepEqual((await ask('sync', 'authentication', authenticationRequest('ipaddress', 'p', '10.1.2.3'))).response, ok);
});

test.serial('friend lists in every form, every page', async (t) => {
  const friends = ['101', '102', '103'].map((id) => ({ platform_type: 'socialnet', id }));
  for (const form of ['callback', 'async', 'sync'] as const) {
    t.deepEqual((await ask(form, 'personalinfo', alice())).response, { ...ok, friends }, form);
  }
  const mbReq = authenticationRequest('microblog', '5001', makeMicroblogAuthenticationKey('mb-alice', 'mb-secret'));
  t.deepEqual((await ask('sync', 'personalinfo', mbReq)).response,
    { ...ok, friends: ['6001', '6002', '6003'].map((id) => ({ platform_type: 'microblog', id })) });
  t.deepEqual((await ask('async', 'personalinfo', authenticationRequest('test', 'x'))).response, { ...ok, friends: [] });
  t.deepEqual((await ask('callback', 'personalinfo', authenticationRequest('socialnet', '100', 'nope'))).response,
    { success: false, reason_code: 1, reason_description: 'access token is not valid', friends: [] });
});

test.serial('the promise and sync forms count their wait as io-wait; the callback form waits for nothing', async (t) => {
  const io = (form: string): number => native.profilerEvent(`auth_probe.ask.${form}`)?.all_time.io_wait_time_max_in_sec ?? -1;
  await waitFor(() => io('sync') > 0 && io('async') > 0 && io('callback') >= 0, 10000, 'profiles');
  t.true(io('sync') > 0);
  t.true(io('async') > 0);
  t.is(io('callback'), 0);
});

test.serial('the server names the agent at start and never logs tokens', (t) => {
  const log = srv.logs().join('\n');
  t.true(log.includes(`AuthenticationClient: authenticator agent at 127.0.0.1:${agent.port}`));
  for (const secret of ['sn-alice', 'sn-bob', 'mb-alice', 'mb-secret']) t.false(log.includes(secret), secret);
  const agentLog = agent.out() + agent.err();
  for (const secret of ['sn-alice', 'sn-bob', 'mb-alice', 'mb-secret', 'forged']) t.false(agentLog.includes(secret), secret);
});
