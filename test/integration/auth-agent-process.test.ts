/**
 * The agent process: manifest checks, start line, signals, and the results that need an agent
 * of their own (unreachable platform, rejected app credentials, busy, unconfigured platform).
 */
import test from 'ava';
import { startFakeSocialnet } from '../fixtures/platforms/socialnet.ts';
import { post, runAgent, startAgentProcess, writeAgentManifest } from './_auth.ts';
import { holdPort } from './_ports.ts';

async function refused(t: import('ava').ExecutionContext, manifest: unknown, message: (file: string) => string): Promise<void> {
  const file = writeAgentManifest(manifest);
  const p = runAgent(file);
  t.is(await p.exited, 1);
  t.is(p.err(), `gsf: TypeError: ${message(file)}\n`);
  t.is(p.out(), '');
}

test('the agent refuses to start unless enabled is 1', async (t) => {
  await refused(t, { components: [{ name: 'Authenticator', arguments: { enabled: 0, port: 0 } }] },
    (f) => `${f}: Authenticator.enabled is 0: the authenticator runs only when it is 1`);
  await refused(t, { components: [] }, (f) => `${f}: Authenticator.enabled is 0: the authenticator runs only when it is 1`);
  await refused(t, { components: [{ name: 'Authenticator', arguments: { enabled: 2 } }] },
    (f) => `${f}: Authenticator.enabled is 2: the authenticator runs only when it is 1`);
});

test('bad manifests name the file, the component and the argument', async (t) => {
  await refused(t, { components: [{ name: 'Authenticator', arguments: { enabled: true } }] },
    (f) => `${f}: Authenticator.enabled must be a non-negative integer`);
  await refused(t, { components: [{ name: 'Authenticator', arguments: { enabled: 1, port: '8080' } }] },
    (f) => `${f}: Authenticator.port must be a non-negative integer`);
  await refused(t, { components: [{ name: 'Authenticator', arguments: { enabled: 1, cache_ttl: 5 } }] },
    (f) => `${f}: Authenticator.cache_ttl is not an argument of Authenticator (known: enabled, address, port, max_body_bytes, cache_ttl_in_sec, cache_max_entries, max_concurrent_platform_requests, max_waiting_platform_requests, friend_list_max_pages, socialnet_base_url, socialnet_app_id, socialnet_app_secret, socialnet_request_timeout_in_ms, microblog_base_url, microblog_consumer_key, microblog_consumer_secret, microblog_request_timeout_in_ms)`);
  await refused(t, { components: [{ name: 'Authenticator', arguments: { enabled: 1, socialnet_base_url: 'graph.example' } }] },
    (f) => `${f}: Authenticator.socialnet_base_url must be an http:// or https:// URL without query or fragment`);
  await refused(t, { components: [{ name: 'SessionService', arguments: {} }] },
    (f) => `${f}: unknown component "SessionService" (known: Authenticator, Logging)`);
  await refused(t, { Authenticator: { enabled: 1 } }, (f) => `${f}: unknown top-level key "Authenticator" (allowed: components)`);
  await refused(t, '{"components": [', (f) => `${f}: is not valid JSON (Unexpected end of JSON input)`);
  const p = runAgent('/nonexistent/authenticator.MANIFEST.json');
  t.is(await p.exited, 1);
  t.is(p.err(), 'gsf: TypeError: /nonexistent/authenticator.MANIFEST.json: cannot be read (ENOENT)\n');
});

test('the agent logs its address at start and stops with exit 0 on SIGINT and SIGTERM', async (t) => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const agent = await startAgentProcess({});
    t.regex(agent.out(), new RegExp(`\\] listening authenticator=127\\.0\\.0\\.1:${agent.port}\\n`));
    t.deepEqual((await post(`${agent.url}/v1/authentication/test`, { player_id: 'x' })).body, { result: 0, description: '' });
    agent.child.kill(signal);
    const code = await new Promise<number | null>((r) => agent.child.on('close', (c) => r(c)));
    t.is(code, 0);
    t.regex(agent.out(), new RegExp(`${signal} received: stopping\\n.*\\] stopped\\n$`));
  }
});

test('unreachable platform: 3; rejected app credentials: 5; unconfigured platform: 7', async (t) => {
  const closed = await holdPort();
  const sn = await startFakeSocialnet({ tokens: { good: { user: '1' } }, friends: {} });
  const a = await startAgentProcess({ socialnet_base_url: `http://127.0.0.1:${closed.port}`, socialnet_app_id: '1', socialnet_app_secret: 's' });
  const b = await startAgentProcess({ socialnet_base_url: `${sn.url}/`, socialnet_app_id: sn.appId, socialnet_app_secret: 'wrong-secret' });
  try {
    t.deepEqual((await post(`${a.url}/v1/authentication/socialnet`, { player_id: '1', access_token: 'good' })).body,
      { result: 3, description: 'socialnet /debug_token is unreachable (ECONNREFUSED)' });
    t.deepEqual((await post(`${a.url}/v1/personalinfo/socialnet`, { player_id: '1', access_token: 'good' })).body,
      { result: 3, description: 'socialnet /debug_token is unreachable (ECONNREFUSED)' });
    t.deepEqual((await post(`${b.url}/v1/authentication/socialnet`, { player_id: '1', access_token: 'good' })).body,
      { result: 5, description: 'socialnet /debug_token answered HTTP 400 (OAuthException 190)' });
    for (const path of ['/v1/authentication/microblog', '/v1/personalinfo/microblog']) {
      t.deepEqual((await post(`${a.url}${path}`, { player_id: '1', access_token: 't', access_token_secret: 's' })).body,
        { result: 7, description: 'platform microblog is not configured on this authenticator' });
    }
  } finally {
    await a.stop();
    await b.stop();
    await sn.close();
    closed.release();
  }
});

test('a friend list longer than friend_list_max_pages is an unexpected platform answer (5)', async (t) => {
  const sn = await startFakeSocialnet({ tokens: { good: { user: '1' } }, friends: { 1: ['a', 'b', 'c', 'd', 'e'] } });
  const agent = await startAgentProcess({
    socialnet_base_url: sn.url, socialnet_app_id: sn.appId, socialnet_app_secret: sn.appSecret, friend_list_max_pages: 2,
  });
  try {
    t.deepEqual((await post(`${agent.url}/v1/personalinfo/socialnet`, { player_id: '1', access_token: 'good' })).body,
      { result: 5, description: 'socialnet friend list has more than 2 pages' });
    t.is(sn.calls.filter((c) => c.path === '/1/friends').length, 2);
  } finally {
    await agent.stop();
    await sn.close();
  }
});

test('past the bound of concurrent and waiting platform requests the agent answers 6', async (t) => {
  const sn = await startFakeSocialnet({ tokens: { good: { user: '1' } }, friends: {} });
  const agent = await startAgentProcess({
    socialnet_base_url: sn.url, socialnet_app_id: sn.appId, socialnet_app_secret: sn.appSecret, socialnet_request_timeout_in_ms: 1000,
    max_concurrent_platform_requests: 1, max_waiting_platform_requests: 0,
  });
  try {
    const slow = post(`${agent.url}/v1/authentication/socialnet`, { player_id: '1', access_token: 'slow-hold' });
    while (sn.callsFor('slow-hold') === 0) await new Promise((r) => setTimeout(r, 10));
    t.deepEqual((await post(`${agent.url}/v1/authentication/socialnet`, { player_id: '1', access_token: 'good' })).body,
      { result: 6, description: 'too many platform requests waiting (0)' });
    t.is(sn.callsFor('good'), 0);
    t.deepEqual((await slow).body, { result: 4, description: 'socialnet /debug_token did not answer within 1000 ms' });
    t.deepEqual((await post(`${agent.url}/v1/authentication/socialnet`, { player_id: '1', access_token: 'good' })).body, { result: 0, description: '' });
  } finally {
    await agent.stop();
    await sn.close();
  }
});
