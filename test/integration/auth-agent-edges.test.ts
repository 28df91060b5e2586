/**
 * The authenticator agent at its edges: credentials that are not well-formed text, platform
 * answers of the wrong shape or with ids JSON cannot hold exactly, and HEAD requests on a
 * keep-alive connection. Each part runs its own agent against its own platform fakes.
 */
import test from 'ava';
import { startFakeSocialnet, type FakeSocialnet } from '../fixtures/platforms/socialnet.ts';
import { startFakeMicroblog, type FakeMicroblog } from '../fixtures/platforms/microblog.ts';
import { post, startAgentProcess, type AgentProcess } from './_auth.ts';
import { serve, type FakeServer } from '../fixtures/platforms/http.ts';
import { hasResponses, parseResponses, rawExchange } from './_raw-http.ts';

{
  /**
   * The authenticator agent and unicode edge cases of the social-platform fields: a JSON string
   * may hold a lone UTF-16 surrogate (`"\ud800"`), which `encodeURIComponent` refuses. SPEC 4.1:
   * every endpoint answers HTTP 200 with a JSON `result`; 2.1/7: incorrect parameters are result 2.
   */
  let sn: FakeSocialnet;
  let mb: FakeMicroblog;
  let agent: AgentProcess;

  test.before(async () => {
    sn = await startFakeSocialnet({ tokens: { 'sn-alice': { user: '100' } }, friends: { 100: ['101'] } });
    mb = await startFakeMicroblog({ tokens: { 'mb-alice': { secret: 'mb-alice-secret', user: '5001' } }, friends: {} });
    agent = await startAgentProcess({
      socialnet_base_url: sn.url, socialnet_app_id: sn.appId, socialnet_app_secret: sn.appSecret, socialnet_request_timeout_in_ms: 2500,
      microblog_base_url: mb.url, microblog_consumer_key: mb.consumerKey, microblog_consumer_secret: 'cs-secret', microblog_request_timeout_in_ms: 2500,
    });
  });

  test.after.always(async () => {
    await agent?.stop();
    await sn?.close();
    await mb?.close();
  });

  // Raw JSON text: the escapes reach the agent as lone surrogates after JSON.parse.
  const CASES: Array<[string, string]> = [
    ['/v1/authentication/socialnet', '{"player_id":"100","access_token":"\\ud800"}'],
    ['/v1/personalinfo/socialnet', '{"player_id":"100","access_token":"sn-alice\\udfff"}'],
    ['/v1/authentication/microblog', '{"player_id":"5001","access_token":"\\udc00mb","access_token_secret":"s"}'],
    ['/v1/personalinfo/microblog', '{"player_id":"5001","access_token":"mb-alice","access_token_secret":"\\ud83d"}'],
  ];

  for (const [path, body] of CASES) {
    test(`a lone surrogate in a credential answers 200 with result 2, not 500: ${path} ${body}`, async (t) => {
      const a = await post(`${agent.url}${path}`, body);
      t.is(a.status, 200);
      t.is(a.contentType, 'application/json');
      t.is((a.body as { result: number }).result, 2);
      t.is(typeof (a.body as { description: unknown }).description, 'string');
    });
  }

  // The same in raw bytes: a credential that is not UTF-8 would reach the platform as U+FFFD.
  test('a body that is not UTF-8 answers 200 with result 2, and no platform is asked', async (t) => {
    const before = sn.calls.length;
    const body = Buffer.concat([Buffer.from('{"player_id":"100","access_token":"sn-alice'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await fetch(`${agent.url}/v1/authentication/socialnet`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    t.deepEqual([res.status, await res.json()], [200, { result: 2, description: 'request body is not UTF-8 text' }]);
    t.is(sn.calls.length, before);
  });
}

{
  /**
   * The authenticator agent against a socialnet platform that answers well-formed JSON of the
   * wrong shape: objects where the Graph API has strings. SPEC 4.1: every endpoint answers 200
   * with a JSON `result`; docs/guides/authenticator.md: an unexpected platform answer is result 5.
   */
  let platform: FakeServer;
  let agent: AgentProcess;

  // `{"toString": 1}` is plain JSON; String() of it throws "Cannot convert object to primitive value".
  const NOT_A_STRING = { toString: 1 };

  test.before(async () => {
    platform = await serve((req) => {
      const token = req.query.get('input_token') ?? req.query.get('access_token') ?? '';
      if (req.path === '/debug_token') {
        if (token === 'error-type-object') {
          return { status: 400, body: { error: { message: 'Invalid OAuth access token.', type: NOT_A_STRING, code: 190 } } };
        }
        if (token === 'huge' || token === 'huge-chunked') {
          // Valid JSON, past the 4 MiB the agent reads of an answer.
          return { status: 200, body: null, raw: JSON.stringify({ data: { pad: 'x'.repeat(5 * 1024 * 1024) } }), chunked: token === 'huge-chunked' };
        }
        // Redirects: a loop, a location that is not HTTP, and one to a good answer (followed).
        if (token === 'loop') return { status: 302, body: null, raw: '', headers: { location: `/debug_token?${req.query.toString()}` } };
        if (token === 'file') return { status: 302, body: null, raw: '', headers: { location: 'file:///etc/passwd' } };
        if (token === 'moved') return { status: 307, body: null, raw: '', headers: { location: '/debug_token?input_token=good' } };
        if (token === 'app-id-object') {
          return { status: 200, body: { data: { is_valid: true, app_id: NOT_A_STRING, user_id: '1' } } };
        }
        return { status: 200, body: { data: { is_valid: true, app_id: '1001', user_id: '1' } } };
      }
      if (req.path === '/1/friends') {
        return { status: 400, body: { error: { message: 'nope', type: 'OAuthException', code: NOT_A_STRING } } };
      }
      return { status: 404, body: {} };
    });
    agent = await startAgentProcess({
      socialnet_base_url: platform.url, socialnet_app_id: '1001', socialnet_app_secret: 'secret', socialnet_request_timeout_in_ms: 2500,
    });
  });

  test.after.always(async () => {
    await agent?.stop();
    await platform?.close();
  });

  test('debug_token answering HTTP 400 with an object error.type is result 5, not a 500', async (t) => {
    const a = await post(`${agent.url}/v1/authentication/socialnet`, { player_id: '1', access_token: 'error-type-object' });
    t.is(a.status, 200);
    t.is(a.contentType, 'application/json');
    t.is((a.body as { result: number }).result, 5);
    t.regex((a.body as { description: string }).description, /^socialnet \/debug_token answered HTTP 400/);
  });

  for (const token of ['huge', 'huge-chunked']) {
    test(`debug_token answering more than 4 MiB is result 5, the rest not read (${token})`, async (t) => {
      const a = await post(`${agent.url}/v1/authentication/socialnet`, { player_id: '1', access_token: token });
      t.is(a.status, 200);
      t.deepEqual(a.body, { result: 5, description: 'socialnet /debug_token answered more than 4194304 bytes' });
    });
  }

  test('debug_token redirecting: followed to an HTTP answer; a loop or a location that is not HTTP is result 5, the platform was reached', async (t) => {
    const answers = await Promise.all(['moved', 'loop', 'file'].map(async (token) =>
      (await post(`${agent.url}/v1/authentication/socialnet`, { player_id: '1', access_token: token })).body));
    t.deepEqual(answers, [
      { result: 0, description: '' },
      { result: 5, description: 'socialnet /debug_token redirected more than 5 times' },
      { result: 5, description: 'socialnet /debug_token answered HTTP 302 to a file location, which is not HTTP' },
    ]);
  });

  test('debug_token answering an object data.app_id is result 5, not a 500', async (t) => {
    const a = await post(`${agent.url}/v1/authentication/socialnet`, { player_id: '1', access_token: 'app-id-object' });
    t.is(a.status, 200);
    t.is(a.contentType, 'application/json');
    t.is((a.body as { result: number }).result, 5);
  });

  test('a friends page answering HTTP 400 with an object error.code is result 5, not a 500', async (t) => {
    const a = await post(`${agent.url}/v1/personalinfo/socialnet`, { player_id: '1', access_token: 'good' });
    t.is(a.status, 200);
    t.is(a.contentType, 'application/json');
    t.is((a.body as { result: number }).result, 5);
    t.regex((a.body as { description: string }).description, /^socialnet friends answered HTTP 400/);
  });
}

{
  /**
   * The authenticator agent against platforms that answer user ids as JSON numbers past 2^53:
   * JSON.parse rounds them, and the agent compares and reports the rounded digits. SPEC 5.1.1:
   * result 0 means the token was validated for `player_id`; docs/guides/authenticator.md: the
   * token passes when `data.user_id` is `player_id`.
   */
  // The token's owner per the platform, and the id JSON.parse rounds it to (a different user).
  const OWNER = '12345678901234567890';
  const ROUNDED = String(Number(OWNER)); // '12345678901234567000'

  let sn: FakeServer;
  let mb: FakeServer;
  let agent: AgentProcess;

  test.before(async () => {
    sn = await serve((req) => {
      if (req.path === '/debug_token') {
        return { status: 200, body: null, raw: `{"data":{"is_valid":true,"app_id":"1001","type":"USER","user_id":${OWNER}}}` };
      }
      return { status: 404, body: {} };
    });
    mb = await serve((req) => {
      if (req.path === '/1.1/account/verify_credentials.json') return { status: 200, body: { id_str: '5001' } };
      if (req.path === '/1.1/friends/ids.json') {
        return { status: 200, body: null, raw: `{"ids":[${OWNER},"6002"],"next_cursor_str":"0","next_cursor":0}` };
      }
      return { status: 404, body: {} };
    });
    agent = await startAgentProcess({
      socialnet_base_url: sn.url, socialnet_app_id: '1001', socialnet_app_secret: 'secret', socialnet_request_timeout_in_ms: 2500,
      microblog_base_url: mb.url, microblog_consumer_key: 'ck', microblog_consumer_secret: 'cs', microblog_request_timeout_in_ms: 2500,
    });
  });

  test.after.always(async () => {
    await agent?.stop();
    await sn?.close();
    await mb?.close();
  });

  test('socialnet: a token the platform says is user 12345678901234567890 does not authenticate player 12345678901234567000', async (t) => {
    t.not(ROUNDED, OWNER);
    const a = await post(`${agent.url}/v1/authentication/socialnet`, { player_id: ROUNDED, access_token: 'token-of-owner' });
    t.is(a.status, 200);
    t.not((a.body as { result: number }).result, 0, 'another user\'s token was accepted');
  });

  test('microblog: a friend id sent as a number past 2^53 is not reported as a different id', async (t) => {
    const a = await post(`${agent.url}/v1/personalinfo/microblog`, { player_id: '5001', access_token: 't', access_token_secret: 's' });
    t.is(a.status, 200);
    const body = a.body as { result: number; friends?: string[] };
    // Either the exact digits the platform sent, or the answer refused as unexpected (5): never a made-up id.
    if (body.result === 0) t.deepEqual(body.friends, [OWNER, '6002']);
    else t.is(body.result, 5);
  });
}

{
  /**
   * The authenticator agent's listener and HEAD requests, on raw sockets. A HEAD answer carries no
   * body (RFC 9110 9.3.2; docs/reference/rest.md: "No body is ever sent ... in answer to HEAD, so a
   * keep-alive client stays in step"); the agent's 405/404 answers write their JSON body anyway.
   */
  let agent: AgentProcess;

  test.before(async () => {
    agent = await startAgentProcess({});
  });

  test.after.always(async () => {
    await agent?.stop();
  });

  const req = (method: string, path: string, body = ''): string =>
    `${method} ${path} HTTP/1.1\r\nHost: t\r\n${body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : ''}\r\n${body}`;

  for (const path of ['/v1/authentication/test', '/v1/nowhere']) {
    test(`HEAD ${path} answers a status and headers only; the next request on the connection gets its own answer`, async (t) => {
      const heads = [true, false];
      const r = await rawExchange(agent.port, [req('HEAD', path) + req('POST', '/v1/authentication/test', '{"player_id":"a"}')],
        (text) => hasResponses(text, 2, heads), 5000);
      const [head, next] = parseResponses(r.text, heads);
      t.is(head!.status, path === '/v1/nowhere' ? 404 : 405);
      // The bytes after the HEAD answer's head must be the POST's status line.
      t.is(next!.status, 200);
      t.deepEqual(JSON.parse(next!.body), { result: 0, description: '' });
    });
  }
}

{
  /**
   * A microblog that moved its API answers 307 to the new path. Each request the agent makes is
   * signed for its own URL with a nonce of its own (OAuth 1.0a signs the URL, and a platform
   * refuses a nonce seen before), redirects included; a redirect to another origin is result
   * 5, and the user's credentials are not sent there.
   */
  let moved: FakeMicroblog;
  let away: FakeMicroblog;
  let agentMoved: AgentProcess;
  let agentAway: AgentProcess;
  const data = { tokens: { 'mb-alice': { secret: 'mb-alice-secret', user: '5001' } }, friends: { 5001: ['6001', '6002', '6003'] } };
  const alice = { player_id: '5001', access_token: 'mb-alice', access_token_secret: 'mb-alice-secret' };
  const start = (mb: FakeMicroblog): Promise<AgentProcess> => startAgentProcess({
    microblog_base_url: mb.url, microblog_consumer_key: mb.consumerKey, microblog_consumer_secret: 'cs-secret', microblog_request_timeout_in_ms: 2500,
  });

  test.before(async () => {
    moved = await startFakeMicroblog({ ...data, movedUnder: '/v2' });
    away = await startFakeMicroblog({ ...data, redirectTo: moved.url });
    [agentMoved, agentAway] = await Promise.all([start(moved), start(away)]);
  });

  test.after.always(async () => {
    await Promise.all([agentMoved?.stop(), agentAway?.stop()]);
    await Promise.all([moved?.close(), away?.close()]);
  });

  test.serial('microblog redirecting to another origin is result 5, and the credentials are not sent there', async (t) => {
    const a = await post(`${agentAway.url}/v1/authentication/microblog`, alice);
    t.deepEqual(a.body, {
      result: 5, description: 'microblog /1.1/account/verify_credentials.json answered HTTP 307 to another origin, where the user\'s credentials are not sent',
    });
    t.is(away.calls.length, 1);
    t.deepEqual(moved.calls, [], 'nothing reached the other origin');
  });

  test.serial('microblog redirecting within its origin: each hop is signed for its own URL, and the answer is the user\'s', async (t) => {
    const a = await post(`${agentMoved.url}/v1/authentication/microblog`, alice);
    t.deepEqual(a.body, { result: 0, description: '' });
    const p = await post(`${agentMoved.url}/v1/personalinfo/microblog`, alice);
    t.deepEqual(p.body, { result: 0, description: '', friends: ['6001', '6002', '6003'] });
    t.deepEqual(moved.calls.map((c) => c.path), [
      '/1.1/account/verify_credentials.json', '/v2/1.1/account/verify_credentials.json',
      '/1.1/friends/ids.json', '/v2/1.1/friends/ids.json', '/1.1/friends/ids.json', '/v2/1.1/friends/ids.json',
    ]);
    t.deepEqual(moved.calls.filter((c) => c.path.startsWith('/v2/')).map((c) => c.query.get('cursor')), [null, '-1', '2']);
    t.deepEqual([moved.goodSignatures, moved.badSignatures], [3, 0]);
  });
}
