import test from 'ava';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAgentConfig, parseAgentConfig } from '../../../src/auth/agent/agent-config.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('the example authenticator manifest is valid and runs the test platforms only', (t) => {
  const c = loadAgentConfig(path.join(root, 'authenticator.MANIFEST.json'));
  t.is(c.authenticator.enabled, 1);
  t.is(c.authenticator.address, '127.0.0.1');
  t.is(c.authenticator.port, 12800);
  t.is(c.authenticator.socialnet_base_url, '');
});

test('defaults fill every argument; Logging is shared with the server schema', (t) => {
  const c = parseAgentConfig({ components: [{ name: 'Authenticator', arguments: { enabled: 1 } }, { name: 'Logging', arguments: { v: 2 } }] }, 'a.json', '/tmp');
  t.like(c.authenticator, {
    address: '127.0.0.1', port: 12800, max_body_bytes: 65536, cache_ttl_in_sec: 300, cache_max_entries: 100000,
    max_concurrent_platform_requests: 64, max_waiting_platform_requests: 10000, friend_list_max_pages: 100,
    socialnet_request_timeout_in_ms: 5000, microblog_request_timeout_in_ms: 5000,
  });
  t.is(c.logging.v, 2);
  t.is(c.logging.log_format, 'text');
});

test('problems name the file, the component and the argument', (t) => {
  const bad = (json: unknown) => t.throws(() => parseAgentConfig(json, 'a.json', '/tmp'), { instanceOf: TypeError });
  t.is(bad({ components: [{ name: 'Authenticator', arguments: { enabled: 1, max_concurrent_platform_requests: 0 } }] })?.message,
    'a.json: Authenticator.max_concurrent_platform_requests must be a positive integer');
  t.is(bad({ components: [{ name: 'Logging', arguments: { log_format: 'xml' } }, { name: 'Authenticator', arguments: { enabled: 1 } }] })?.message,
    'a.json: Logging.log_format must be one of "text", "json"');
  t.is(bad({ components: [{ name: 'Authenticator', arguments: { enabled: 1 } }, { name: 'Authenticator' }] })?.message,
    'a.json: component Authenticator is listed twice');
  for (const url of ['http://host name', 'ftp://x', 'https://graph.example/?x=1', 'graph.example']) {
    t.is(bad({ components: [{ name: 'Authenticator', arguments: { enabled: 1, microblog_base_url: url } }] })?.message,
      'a.json: Authenticator.microblog_base_url must be an http:// or https:// URL without query or fragment', url);
  }
  t.is(bad({ components: {} })?.message, 'a.json: "components" must be an array');
  t.is(bad([])?.message, 'a.json: must be a JSON object with "components"');
});
