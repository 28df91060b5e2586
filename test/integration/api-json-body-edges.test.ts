/**
 * JSON bodies that are valid JSON but unusual, sent to a plugin route (route-probe's
 * `POST /game/body` echoes `{body}`) and to a console operation that takes the body as it is
 * (`POST /cs-api/v1/refund/{receipt_id}/`): served as sent, or refused with a clear 400
 * (rest.md, errors.md).
 */
import test from 'ava';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from './_server.ts';
import { client } from './_http.ts';

const ARENA = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'arena');
let s: TestServer;
let http: ReturnType<typeof client>;

test.before(async () => {
  s = await startTestServer({ ApiService: { api_service_handler_timeout_in_ms: 5000 }, DeployApiService: {} }, ['route-probe', ARENA]);
  http = client(s.server.api.port);
});
test.after.always(async () => {
  await s?.stop();
});

/** A JSON array nested `depth` deep: valid JSON of 2 × depth bytes (well under the 1 MiB limit). */
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const badRequest = (message: string): unknown => ({ error: 'GSF_ERR_BAD_REQUEST', message });

test.serial('a body nested deeper than 100 levels is refused with 400; 100 levels are served', async (t) => {
  const tooDeep = badRequest('request body nests arrays and objects deeper than 100 levels');
  for (const [url, body] of [['/game/body', nested(5000)], ['/game/body', nested(101)], ['/cs-api/v1/refund/r-1/', `{"log":${nested(5000)}}`]] as const) {
    const r = await http.post(url, body);
    t.deepEqual([r.status, r.body], [400, tooDeep], url);
  }
  // Brackets inside strings do not count.
  const r = await http.post('/game/body', `{"text":"${'['.repeat(500)}","list":${nested(99)}}`);
  t.is(r.status, 200);
  t.is((r.body as { body: { text: string } }).body.text, '['.repeat(500));
  t.is((await http.post('/game/body', nested(100))).status, 200);
});

test.serial('a string with an unpaired surrogate (a \\u escape) is refused with 400; a pair is served as sent', async (t) => {
  // Such text has no UTF-8 form: on its way to the event thread it would become U+FFFD.
  const cases: Array<[string, string, string]> = [
    ['/game/body', '{"name":"a\\ud800b"}', "request body: the value of 'name' holds an unpaired UTF-16 surrogate (text with no UTF-8 form)"],
    ['/game/body', '{"list":["ok","\\udc00"]}', "request body: the value of '1' holds an unpaired UTF-16 surrogate (text with no UTF-8 form)"],
    ['/game/body', '{"\\ud800":1}', 'request body: a key holds an unpaired UTF-16 surrogate (text with no UTF-8 form)'],
    ['/game/body', '"\\ud800"', 'request body: the body holds an unpaired UTF-16 surrogate (text with no UTF-8 form)'],
    ['/cs-api/v1/refund/r-1/', '{"account_id":"\\ud800","items":[{"item_id":"gem","quantity":1}]}',
      "request body: the value of 'account_id' holds an unpaired UTF-16 surrogate (text with no UTF-8 form)"],
  ];
  for (const [url, body, message] of cases) {
    const r = await http.post(url, body);
    t.deepEqual([r.status, r.body], [400, badRequest(message)], body);
  }
  const pair = await http.post('/game/body', '{"name":"a\\ud83d\\ude00b"}');
  t.deepEqual([pair.status, pair.body], [200, { body: { name: 'a\u{1F600}b' } }]);
});

test.serial('a key named __proto__ in a body or a query is refused with 400', async (t) => {
  const body = await http.post('/game/body', '{"a":{"__proto__":{"x":1}},"b":1}');
  t.deepEqual([body.status, body.body], [400, badRequest("request body has a key '__proto__', which no request may use")]);
  const escaped = await http.post('/game/body', '{"\\u005f_proto__":1}');
  t.is(escaped.status, 400, 'the same key, written with an escape');
  const query = await http.get('/game/echo/w?__proto__=1');
  t.deepEqual([query.status, query.body], [400, badRequest("query has a key '__proto__', which no request may use")]);
  t.is((await http.post('/game/body', '{"proto":1}')).status, 200);
});
