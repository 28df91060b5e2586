/**
 * DeployApiService as a service of the API listener: present only when listed, behind the same
 * token and body limit, with the deadline and error form of every handler route; misbehaving
 * console handlers; route and registration conflicts that stop the start naming both sides.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../src/index.ts';
import { parseManifest } from '../../src/config/manifest.ts';
import { fixtures, startTestServer, waitFor, writePlugin, type TestServer } from './_server.ts';
import { failure, startConsoleServer } from './_console.ts';

const V1 = '/cs-api/v1';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-console-plugins-'));
test.after.always(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A plugin folder whose register() body is `body`. */
function plugin(name: string, body: string): string {
  return writePlugin(dir, name, body);
}

async function startFails(plugins: string[], components: Record<string, unknown>[] = []): Promise<string> {
  const err = await startServer({ dir, manifest: { components: [{ name: 'ApiService', arguments: { api_service_port: 0 } }, ...components], plugins } })
    .then(async (s) => {
      await s.stop();
      return null;
    }, (e: unknown) => e as Error);
  if (err === null) throw new Error('the server started');
  return err.message;
}

test.serial('without the component /cs-api/ answers 404', async (t) => {
  const s = await startConsoleServer(null);
  try {
    t.deepEqual((await s.call('GET', `${V1}/account/ada/`)).body, failure('GSF_ERR_NOT_FOUND', `no route for GET ${V1}/account/ada/`));
    t.is((await s.call('GET', `${V1}/custom-queries/`)).status, 404);
    t.false(s.logs().some((l) => l.includes('DeployApiService')));
  } finally {
    await s.stop();
  }
});

test.serial('the same bearer token and body limit as the rest of the API; a configured page size limit', async (t) => {
  const s = await startConsoleServer(true, {
    ApiService: { api_service_token: 's3cret', api_service_max_body_bytes: 64 },
    DeployApiService: { deploy_api_max_page_size: 5 },
  });
  try {
    const denied = await s.call('GET', `${V1}/search-conditions/`);
    t.deepEqual([denied.status, denied.body, denied.headers.get('www-authenticate')],
      [401, failure('GSF_ERR_UNAUTHORIZED', 'missing or invalid bearer token'), 'Bearer']);
    const auth = { Authorization: 'Bearer s3cret' };
    t.deepEqual((await s.call('GET', `${V1}/search-conditions/`, undefined, auth)).body, ['name', 'name_prefix', 'nickname']);
    const big = await s.call('POST', `${V1}/notice/`, { category: 'all', color: '#000000', messages: [{ language_code: 'en', message: 'x'.repeat(100) }] }, auth);
    t.deepEqual([big.status, big.body], [413, failure('GSF_ERR_BODY_TOO_LARGE', 'request body exceeds 64 bytes')]);
    const paged = await s.call('GET', `${V1}/account/search/?condition=name_prefix&value=a&page_size=6`, undefined, auth);
    t.deepEqual([paged.status, paged.body], [400, failure('GSF_ERR_BAD_REQUEST', "page_size must be an integer from 1 to 5 (got '6')")]);
  } finally {
    await s.stop();
  }
});

test.serial('deploy_api_max_page_size is checked at start: 1 to 10000', async (t) => {
  const pages = (size: unknown): Record<string, unknown>[] => [{ name: 'DeployApiService', arguments: { deploy_api_max_page_size: size } }];
  const api = { name: 'ApiService', arguments: {} };
  t.notThrows(() => parseManifest({ components: [api, ...pages(10_000)] }, 'MANIFEST.json', dir));
  t.notThrows(() => parseManifest({ components: [api, ...pages(1)] }, 'MANIFEST.json', dir));
  t.is(await startFails([], pages(10_001)),
    '(inline manifest): DeployApiService.deploy_api_max_page_size must be at most 10000 (a page is built and sent whole, as one answer)');
  t.is(await startFails([], pages(0)), '(inline manifest): DeployApiService.deploy_api_max_page_size must be a positive integer');
});

test.serial('the largest page size, and a page number far past the end, get the same answer from both halves', async (t) => {
  for (const managed of [true, false]) {
    const s = await startConsoleServer(managed, { DeployApiService: { deploy_api_max_page_size: 10_000 } });
    try {
      (await s.player('ada')).close();
      const search = async (query: string): Promise<unknown> => (await s.call('GET', `${V1}/account/search/?condition=name_prefix&value=a&${query}`)).body;
      t.deepEqual(await search('page_size=10000'), { users: [{ account_id: 'ada' }] });
      // 2^52 * 4096 is 2^64: a page start computed in 64 bits would wrap to 0.
      t.deepEqual(await search('page_size=4096&page_no=4503599627370496'), { users: [] }, managed ? 'managed' : 'native');
      t.deepEqual((await s.call('GET', `${V1}/account/search/?condition=name_prefix&value=a&page_size=10001`)).body,
        failure('GSF_ERR_BAD_REQUEST', "page_size must be an integer from 1 to 10000 (got '10001')"));
    } finally {
      await s.stop();
    }
  }
});

test.serial('console handlers that never answer, throw, answer the wrong kind or answer twice', async (t) => {
  // Long enough for the handlers that do answer, on a loaded machine.
  const s: TestServer = await startTestServer({
    ApiService: { api_service_handler_timeout_in_ms: 2000 }, DeployApiService: {},
  }, ['console-probe']);
  const call = async (method: string, url: string, body?: string): Promise<[number, unknown]> => {
    const r = await fetch(`http://127.0.0.1:${s.server.api.port}${url}`, { method, body });
    const text = await r.text();
    return [r.status, text === '' ? undefined : JSON.parse(text)];
  };
  try {
    t.deepEqual(await call('GET', `${V1}/account/ada/`),
      [504, failure('GSF_ERR_HANDLER_TIMEOUT', `GET ${V1}/account/ada/: the handler did not answer within 2000 ms`)]);
    t.true(s.logs().some((l) => l.includes(`GSF_ERR_HANDLER_TIMEOUT: GET ${V1}/account/ada/: the handler did not answer within 2000 ms`)));
    t.true(s.logs().some((l) => l.includes(`cs-api audit: method=GET, path=${V1}/account/ada/, status=504`)));
    t.deepEqual(await call('GET', `${V1}/account/ada/connection/`), [500, failure('GSF_ERR_INTERNAL', 'internal error: no idea')]);
    t.deepEqual(await call('GET', `${V1}/account/ada/ban/`),
      [500, failure('GSF_ERR_INTERNAL', `internal error: GET ${V1}/account/ada/ban/: the answer must be a boolean, got string`)]);
    t.deepEqual(await call('GET', `${V1}/account/ada/character/`), [200, []]);
    await waitFor(() => s.logs().some((l) => l.includes(`GET ${V1}/account/ada/character/: a second answer (JSON array) was ignored`)));
    await waitFor(() => s.logs().some((l) => l.includes("GSF_ERR_HANDLER_FAILED: plugin 'console-probe' console handler")
      && l.includes('failed: no idea')));
    // A POST custom query takes its fields from the JSON body; it may answer an array.
    t.deepEqual(await call('POST', `${V1}/custom-queries/tools/echo/`, '{"a":1,"b":2}'), [200, [{ a: 1, b: 2 }]]);
    t.deepEqual(await call('POST', `${V1}/custom-queries/tools/echo/`, '{"b":2}'),
      [400, failure('GSF_ERR_BAD_REQUEST', "custom query 'Echo' needs request field(s) a")]);
    t.deepEqual(await call('POST', `${V1}/custom-queries/tools/echo/`, '[1]'), [400, failure('GSF_ERR_BAD_REQUEST', 'request body must be a JSON object')]);
    t.deepEqual(await call('GET', `${V1}/search-conditions/`), [200, ['name']]);
    // An operation the serving side does not implement: 404, refused before any handler, audited.
    t.deepEqual(await call('POST', `${V1}/refund/r-1/`, '{"amount":3}'),
      [404, failure('GSF_ERR_NOT_IMPLEMENTED', 'operation Refund is not implemented by the managed console handlers')]);
    t.true(s.logs().some((l) => l.includes(`cs-api audit: method=POST, path=${V1}/refund/r-1/, status=404`)));
    // Registrations of the managed side serve; no native plugin is loaded.
    t.true(s.logs().some((l) => l.includes('DeployApiService: the managed console handlers serve /cs-api/v1/ (plugin(s) console-probe); '
      + 'the native ones are ignored (no native plugin registers any)')));
  } finally {
    await s.stop();
  }
});

test.serial('with the native side serving and no native plugin, every operation answers 404 not implemented', async (t) => {
  const s = await startTestServer({ DeployApiService: { deploy_api_service_use_managed: false } }, ['console-probe']);
  try {
    const r = await fetch(`http://127.0.0.1:${s.server.api.port}${V1}/account/ada/`);
    t.deepEqual([r.status, await r.json()],
      [404, failure('GSF_ERR_NOT_IMPLEMENTED', 'operation GetUser is not implemented by the native console handlers')]);
    t.true(s.logs().some((l) => l.includes('DeployApiService: the native console handlers serve /cs-api/v1/ (no native plugin registers any); '
      + 'the managed ones are ignored (plugin(s) console-probe)')));
  } finally {
    await s.stop();
  }
});

test.serial('two plugins implementing one console operation stop the start naming both', async (t) => {
  const message = await startFails([path.join(fixtures, 'plugins', 'console-probe'), path.join(fixtures, 'plugins', 'console-probe-twin')]);
  t.is(message, "plugin 'console-probe-twin' registers console operation 'GetUser', already registered by plugin 'console-probe'");
});

test.serial('a plugin route that overlaps one of gsf\'s stops the start naming both', async (t) => {
  const message = await startFails([plugin('shadow', "api.http.route('GET', '/v1/{anything}', (_q, res) => res.void());")]);
  t.is(message, "plugin 'shadow' route GET /v1/{anything} conflicts with gsf route GET /v1/status");
});

test.serial('overlapping routes of two plugins stop the start naming both', async (t) => {
  const a = plugin('board-a', "api.http.route('GET', '/board/{n}', (_q, res) => res.void());");
  const b = plugin('board-b', "api.http.route('GET', '/board/top', (_q, res) => res.void());\napi.http.route('POST', '/board/{n}', (_q, res) => res.void());");
  t.is(await startFails([a, b]), "plugin 'board-b' route GET /board/top conflicts with plugin 'board-a' route GET /board/{n}");
});

test.serial('a plugin route under /cs-api/ is refused, with the console listed or not', async (t) => {
  const p = plugin('sneaky', "api.http.route('GET', '/cs-api/v1/mine', (_q, res) => res.void());");
  const expected = "plugin 'sneaky' route GET /cs-api/v1/mine conflicts with the operations console, which owns /cs-api/ (register a custom query instead)";
  t.is(await startFails([p]), expected);
  t.is(await startFails([p], [{ name: 'DeployApiService', arguments: {} }]), expected);
});

test.serial('bad route registrations name the plugin and what is wrong', async (t) => {
  t.is(await startFails([plugin('typo', "api.http.route('FETCH' as never, '/x', (_q, res) => res.void());")]),
    "plugin 'typo' register failed: plugin 'typo' route: method must be one of GET, POST, PUT, DELETE, PATCH, got \"FETCH\"");
  t.is(await startFails([plugin('spaces', "api.http.route('GET', '/a b', (_q, res) => res.void());")]),
    "plugin 'spaces' register failed: plugin 'spaces' route: segment 'a b' of '/a b' must be a {parameter} or plain URL characters");
  t.is(await startFails([plugin('norel', "api.http.route('GET', 'x', (_q, res) => res.void());")]),
    "plugin 'norel' register failed: plugin 'norel' route: the path must be a string starting with '/', got \"x\"");
});
