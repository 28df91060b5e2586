/**
 * The authenticator agent as a real `gsf authenticator` process, against fake socialnet and
 * microblog servers on loopback.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { startFakeSocialnet, type FakeSocialnet } from '../fixtures/platforms/socialnet.ts';
import { startFakeMicroblog, type FakeMicroblog } from '../fixtures/platforms/microblog.ts';
import { post, startAgentProcess, type AgentProcess } from './_auth.ts';

let sn: FakeSocialnet;
let mb: FakeMicroblog;
let agent: AgentProcess;

const SN_TOKENS = {
  'sn-alice': { user: '100' },
  'sn-bob': { user: '200' },
  'sn-other-app': { user: '100', app: '9999' },
  'sn-cache': { user: '300' },
  'sn-shared': { user: '301' },
};
const MB_TOKENS = {
  'mb-alice': { secret: 'mb-alice-secret', user: '5001' },
  'mb-bob': { secret: 'mb-bob-secret', user: '5002' },
  'mb-cache': { secret: 'mb-cache-secret', user: '5003' },
};

// Long beside a fake's answer on a loaded machine (tests run side by side), short of its slow-* tokens' 3000 ms.
export function platformArgs(s: FakeSocialnet, m: FakeMicroblog, timeoutMs = 2500): Record<string, unknown> {
  return {
    socialnet_base_url: s.url, socialnet_app_id: s.appId, socialnet_app_secret: s.appSecret, socialnet_request_timeout_in_ms: timeoutMs,
    microblog_base_url: m.url, microblog_consumer_key: m.consumerKey, microblog_consumer_secret: 'cs-secret', microblog_request_timeout_in_ms: timeoutMs,
  };
}

test.before(async () => {
  sn = await startFakeSocialnet({ tokens: SN_TOKENS, friends: { 100: ['101', '102', '103', '104', '105'], 200: [] } });
  mb = await startFakeMicroblog({ tokens: MB_TOKENS, friends: { 5001: ['6001', '6002', '6003'] } });
  agent = await startAgentProcess(platformArgs(sn, mb));
});

test.after.always(async () => {
  await agent?.stop();
  await sn?.close();
  await mb?.close();
});

const call = (path: string, body: unknown, method?: string) => post(`${agent.url}${path}`, body, method);

test('test endpoints authenticate every player_id and list no friends', async (t) => {
  const a = await call('/v1/authentication/test', { player_id: 'anyone at all' });
  t.is(a.status, 200);
  t.is(a.contentType, 'application/json');
  t.deepEqual(a.body, { result: 0, description: '' });
  const p = await call('/v1/personalinfo/test', { player_id: '42', extra: 'ignored' });
  t.is(p.status, 200);
  t.is(p.contentType, 'application/json');
  t.deepEqual(p.body, { result: 0, description: '', friends: [] });
});

test('ipaddress authenticates every player_id with a valid IPv4 or IPv6 address', async (t) => {
  for (const ip of ['203.0.113.9', '::1', '2001:db8::ff00:42:8329', '::ffff:192.0.2.1']) {
    t.deepEqual((await call('/v1/authentication/ipaddress', { player_id: 'p', ip })).body, { result: 0, description: '' }, ip);
  }
  for (const ip of ['999.1.1.1', '1.2.3', 'localhost', '2001:db8::g', ' 10.0.0.1']) {
    const a = await call('/v1/authentication/ipaddress', { player_id: 'p', ip });
    t.is(a.status, 200);
    t.deepEqual(a.body, { result: 2, description: 'ip is not a valid IPv4 or IPv6 address' }, ip);
  }
});

const BAD_INPUTS: Array<[string, unknown, string]> = [
  ['/v1/authentication/test', '{"player_id": ', 'request body is not valid JSON'],
  ['/v1/authentication/test', '', 'request body is not valid JSON'],
  ['/v1/authentication/test', '[1,2]', 'request body must be a JSON object'],
  ['/v1/authentication/test', 'null', 'request body must be a JSON object'],
  ['/v1/authentication/test', {}, 'player_id is missing'],
  ['/v1/authentication/test', { player_id: 7 }, 'player_id must be a string'],
  ['/v1/authentication/test', { player_id: '' }, 'player_id must not be empty'],
  ['/v1/personalinfo/test', { playerid: 'x' }, 'player_id is missing'],
  ['/v1/authentication/ipaddress', { player_id: 'p' }, 'ip is missing'],
  ['/v1/authentication/ipaddress', { player_id: 'p', ip: 167772161 }, 'ip must be a string'],
  ['/v1/authentication/socialnet', { player_id: '100' }, 'access_token is missing'],
  ['/v1/authentication/socialnet', { player_id: '100', access_token: ['sn-alice'] }, 'access_token must be a string'],
  ['/v1/authentication/socialnet', { player_id: null, access_token: 'sn-alice' }, 'player_id must be a string'],
  ['/v1/personalinfo/socialnet', { player_id: '100', access_token: '' }, 'access_token must not be empty'],
  ['/v1/authentication/microblog', { player_id: '5001', access_token: 'mb-alice' }, 'access_token_secret is missing'],
  ['/v1/personalinfo/microblog', { player_id: '5001', access_token: 'mb-alice', access_token_secret: 1 }, 'access_token_secret must be a string'],
];

for (const [path, body, description] of BAD_INPUTS) {
  test(`incorrect parameters: ${path} ${typeof body === 'string' ? JSON.stringify(body) : JSON.stringify(body)}`, async (t) => {
    const a = await call(path, body);
    t.is(a.status, 200);
    t.is(a.contentType, 'application/json');
    t.deepEqual(a.body, { result: 2, description });
  });
}

test('unknown paths answer 404, other methods 405, big bodies 413, each with a JSON body', async (t) => {
  const nf = await call('/v1/authentication/nowhere', { player_id: 'x' });
  t.is(nf.status, 404);
  t.is(nf.contentType, 'application/json');
  t.deepEqual(nf.body, { error: 'GSF_ERR_NOT_FOUND', message: 'no route for POST /v1/authentication/nowhere' });
  const root = await call('/', {}, 'GET');
  t.is(root.status, 404);
  t.deepEqual(root.body, { error: 'GSF_ERR_NOT_FOUND', message: 'no route for GET /' });
  const res = await fetch(`${agent.url}/v1/authentication/test`);
  t.is(res.status, 405);
  t.is(res.headers.get('allow'), 'POST');
  t.deepEqual(await res.json(), { error: 'GSF_ERR_METHOD_NOT_ALLOWED', message: 'method GET not allowed for /v1/authentication/test', allowed: ['POST'] });
  const big = await call('/v1/authentication/test', { player_id: 'x'.repeat(70000) });
  t.is(big.status, 413);
  t.deepEqual(big.body, { error: 'GSF_ERR_BODY_TOO_LARGE', message: 'request body exceeds 65536 bytes' });
});

test('socialnet: a valid token of the player succeeds; forged, another user\'s and another app\'s fail with 1', async (t) => {
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '100', access_token: 'sn-alice' })).body, { result: 0, description: '' });
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '100', access_token: 'forged-token' })).body,
    { result: 1, description: 'access token is not valid' });
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '100', access_token: 'sn-bob' })).body,
    { result: 1, description: 'access token belongs to another user' });
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '100', access_token: 'sn-other-app' })).body,
    { result: 1, description: 'access token was issued to another app' });
  const check = sn.calls.find((c) => c.path === '/debug_token' && c.query.get('input_token') === 'sn-alice')!;
  t.is(check.query.get('access_token'), `${sn.appId}|${sn.appSecret}`);
});

test('socialnet: a positive answer is cached, identical checks in flight share one call, failures are not cached', async (t) => {
  for (let i = 0; i < 3; i++) {
    t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '300', access_token: 'sn-cache' })).body, { result: 0, description: '' });
  }
  t.is(sn.callsFor('sn-cache'), 1);
  const together = await Promise.all(Array.from({ length: 8 }, () => call('/v1/authentication/socialnet', { player_id: '301', access_token: 'sn-shared' })));
  t.deepEqual(together.map((a) => a.body), Array.from({ length: 8 }, () => ({ result: 0, description: '' })));
  t.is(sn.callsFor('sn-shared'), 1);
  // The cache key holds the player: the same token for another player is checked (and fails).
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '999', access_token: 'sn-cache' })).body,
    { result: 1, description: 'access token belongs to another user' });
  t.is(sn.callsFor('sn-cache'), 2);
  for (let i = 0; i < 2; i++) await call('/v1/authentication/socialnet', { player_id: '100', access_token: 'forged-twice' });
  t.is(sn.callsFor('forged-twice'), 2);
});

test('socialnet: the friend list follows paging.next to the end', async (t) => {
  const before = sn.calls.filter((c) => c.path === '/100/friends').length;
  const a = await call('/v1/personalinfo/socialnet', { player_id: '100', access_token: 'sn-alice' });
  t.deepEqual(a.body, { result: 0, description: '', friends: ['101', '102', '103', '104', '105'] });
  const pages = sn.calls.filter((c) => c.path === '/100/friends').slice(before);
  t.deepEqual(pages.map((c) => c.query.get('after')), [null, '2', '4']);
  t.deepEqual((await call('/v1/personalinfo/socialnet', { player_id: '200', access_token: 'sn-bob' })).body, { result: 0, description: '', friends: [] });
  t.deepEqual((await call('/v1/personalinfo/socialnet', { player_id: '100', access_token: 'sn-bob' })).body,
    { result: 1, description: 'access token belongs to another user' });
  t.deepEqual((await call('/v1/personalinfo/socialnet', { player_id: '100', access_token: 'nope' })).body,
    { result: 1, description: 'access token is not valid' });
});

test('socialnet: 5xx, malformed JSON and slow answers are results 5, 5 and 4', async (t) => {
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '1', access_token: 'boom-1' })).body,
    { result: 5, description: 'socialnet /debug_token answered HTTP 503' });
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '1', access_token: 'garbled-1' })).body,
    { result: 5, description: 'socialnet /debug_token answered HTTP 200 with a body that is not JSON' });
  t.deepEqual((await call('/v1/authentication/socialnet', { player_id: '1', access_token: 'slow-1' })).body,
    { result: 4, description: 'socialnet /debug_token did not answer within 2500 ms' });
  t.deepEqual((await call('/v1/personalinfo/socialnet', { player_id: '1', access_token: 'slow-2' })).body,
    { result: 4, description: 'socialnet /debug_token did not answer within 2500 ms' });
});

// Serial: these count the fake's signature checks, which concurrent tests would also move.
test.serial('microblog: OAuth-signed verify_credentials; the fake checks every signature', async (t) => {
  const good = mb.goodSignatures;
  t.deepEqual((await call('/v1/authentication/microblog', { player_id: '5001', access_token: 'mb-alice', access_token_secret: 'mb-alice-secret' })).body,
    { result: 0, description: '' });
  t.is(mb.goodSignatures, good + 1);
  const bad = mb.badSignatures;
  t.deepEqual((await call('/v1/authentication/microblog', { player_id: '5001', access_token: 'mb-alice', access_token_secret: 'forged-secret' })).body,
    { result: 1, description: 'access token is not valid' });
  t.is(mb.badSignatures, bad + 1);
  t.deepEqual((await call('/v1/authentication/microblog', { player_id: '5001', access_token: 'mb-unknown', access_token_secret: 'x' })).body,
    { result: 1, description: 'access token is not valid' });
  t.deepEqual((await call('/v1/authentication/microblog', { player_id: '5001', access_token: 'mb-bob', access_token_secret: 'mb-bob-secret' })).body,
    { result: 1, description: 'access token belongs to another user' });
  const v = mb.calls.find((c) => c.path === '/1.1/account/verify_credentials.json')!;
  t.regex(v.headers.authorization ?? '', /^OAuth oauth_consumer_key="ck-test", oauth_nonce="[0-9a-f]{32}", oauth_signature_method="HMAC-SHA1", oauth_timestamp="\d+", oauth_token="mb-[a-z]+", oauth_version="1.0", oauth_signature="[A-Za-z0-9%]+"$/);
});

test.serial('microblog: cache, friend ids with cursors, platform failures', async (t) => {
  for (let i = 0; i < 3; i++) {
    t.deepEqual((await call('/v1/authentication/microblog', { player_id: '5003', access_token: 'mb-cache', access_token_secret: 'mb-cache-secret' })).body,
      { result: 0, description: '' });
  }
  t.is(mb.callsFor('mb-cache'), 1);
  const a = await call('/v1/personalinfo/microblog', { player_id: '5001', access_token: 'mb-alice', access_token_secret: 'mb-alice-secret' });
  t.deepEqual(a.body, { result: 0, description: '', friends: ['6001', '6002', '6003'] });
  t.deepEqual(mb.calls.filter((c) => c.path === '/1.1/friends/ids.json').map((c) => c.query.get('cursor')), ['-1', '2']);
  t.deepEqual((await call('/v1/authentication/microblog', { player_id: '1', access_token: 'boom-1', access_token_secret: 's' })).body,
    { result: 5, description: 'microblog /1.1/account/verify_credentials.json answered HTTP 503' });
  t.deepEqual((await call('/v1/authentication/microblog', { player_id: '1', access_token: 'garbled-1', access_token_secret: 's' })).body,
    { result: 5, description: 'microblog /1.1/account/verify_credentials.json answered HTTP 200 with a body that is not JSON' });
  t.deepEqual((await call('/v1/authentication/microblog', { player_id: '1', access_token: 'slow-1', access_token_secret: 's' })).body,
    { result: 4, description: 'microblog /1.1/account/verify_credentials.json did not answer within 2500 ms' });
});

test('access tokens and secrets never appear in the log; a short hash does', async (t) => {
  await call('/v1/authentication/socialnet', { player_id: '100', access_token: 'sn-alice' });
  await call('/v1/authentication/socialnet', { player_id: '1', access_token: 'boom-logged' });
  await call('/v1/authentication/microblog', { player_id: '5001', access_token: 'mb-alice', access_token_secret: 'mb-alice-secret' });
  const log = agent.out() + agent.err();
  const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);
  t.true(log.includes(`authentication socialnet player_id=100 token=sha256:${hash('sn-alice')} result=0`));
  t.true(log.includes(`authentication socialnet player_id=1 token=sha256:${hash('boom-logged')} failed: socialnet /debug_token answered HTTP 503`));
  for (const secret of [...Object.keys(SN_TOKENS), ...Object.keys(MB_TOKENS), 'mb-alice-secret', 'boom-logged', 'forged-token', sn.appSecret, 'cs-secret']) {
    t.false(log.includes(secret), secret);
  }
});
