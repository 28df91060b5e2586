/**
 * REST routes of plugins on the API service: handlers run as `api` events with random tags and
 * answer through writers of six kinds, exactly once, possibly later; failures and silence get
 * exact statuses and bodies; answers of events that changed objects leave once durable.
 * Managed routes (route-probe) and native ones (route-native, C) on the same server.
 */
import test from 'ava';
import path from 'node:path';
import { API_STATUS } from '../../src/errors.ts';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';
import { client } from './_http.ts';

const PLUGINS = ['route-probe', path.join(fixtures, 'native-plugins', 'route-native')];
let s: TestServer;
let http: ReturnType<typeof client>;

test.before(async () => {
  // Long enough for answers that wait on an SQLite commit on a loaded machine.
  s = await startTestServer({ ApiService: { api_service_handler_timeout_in_ms: 3000 } }, PLUGINS);
  http = client(s.server.api.port);
});
test.after.always(async () => {
  await s?.stop();
});

const error = (code: string, message: string): unknown => ({ error: code, message });

test.serial('a route handler runs as an api event with a random tag, and sees params, query and body', async (t) => {
  const a = await http.get('/game/echo/hi?x=1&y=two');
  const b = await http.get('/game/echo/hi/');
  t.is(a.status, 200);
  const body = a.body as Record<string, unknown>;
  t.like(body, {
    method: 'GET', path: '/game/echo/hi', params: { word: 'hi' }, query: { x: '1', y: 'two' }, kind: 'api',
    name: 'api.route-probe.GET.game.echo.word',
  });
  t.true(Number.isSafeInteger(body.tag) && (body.tag as number) >= 2 ** 32);
  t.not(body.tag, (b.body as Record<string, unknown>).tag);
  // A key given twice is refused: the handler's query holds one string per key.
  t.deepEqual(await http.get('/game/echo/hi?x=1&x=2').then((r) => [r.status, r.body]),
    [400, error('GSF_ERR_BAD_REQUEST', "query parameter 'x' must be given once, got 2 values")]);
  t.deepEqual(await http.post('/game/body', '{"a":[1,2]}').then((r) => [r.status, r.body]), [200, { body: { a: [1, 2] } }]);
  t.deepEqual(await http.post('/game/body').then((r) => [r.status, r.body]), [200, {}]);
  t.deepEqual(await http.post('/game/body', '{nope').then((r) => [r.status, r.body]), [400, error('GSF_ERR_BAD_REQUEST', 'request body is not valid JSON')]);
  const head = await fetch(`http://127.0.0.1:${s.server.api.port}/game/kinds/json`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-length'), String('{"a":1,"b":[true,null]}'.length));
  t.is(await head.text(), '');
  t.deepEqual(await http.put('/game/body').then((r) => [r.status, r.headers.get('allow')]), [405, 'POST']);
});

test.serial('writers of the six kinds answer 204 or 200 with their JSON', async (t) => {
  const got = async (kind: string): Promise<[number, string, string | null]> => {
    const r = await http.get(`/game/kinds/${kind}`);
    return [r.status, r.text, r.headers.get('content-type')];
  };
  t.deepEqual(await got('void'), [204, '', null]);
  t.deepEqual(await got('bool'), [200, 'true', 'application/json']);
  t.deepEqual(await got('json'), [200, '{"a":1,"b":[true,null]}', 'application/json']);
  t.deepEqual(await got('array'), [200, '[1,"two",{"three":3}]', 'application/json']);
  t.deepEqual(await got('string'), [200, '"he said \\"hi\\"\\n"', 'application/json']);
  t.deepEqual(await got('strings'), [200, '["a","b"]', 'application/json']);
});

test.serial('each failure status answers its HTTP status and code (the README table)', async (t) => {
  for (const entry of API_STATUS.slice(1)) {
    const r = await http.get(`/game/fail/${entry.name}`);
    t.deepEqual([r.status, r.body], [entry.http, error(entry.code!, entry.code === 'GSF_ERR_INTERNAL'
      ? `internal error: failed with ${entry.name}` : `failed with ${entry.name}`)], entry.name);
  }
  const wrong = await http.get('/game/fail/OK');
  t.deepEqual([wrong.status, (wrong.body as { error: string }).error], [500, 'GSF_ERR_INTERNAL']);
});

test.serial('a second answer is ignored and logged; a handler that never answers gets 504 and a log line', async (t) => {
  t.deepEqual(await http.get('/game/twice').then((r) => [r.status, r.body]), [200, 'first']);
  await waitFor(() => s.logs().some((l) => l.includes('GET /game/twice: a second answer (string) was ignored; a request is answered once')));
  const started = Date.now();
  const never = await http.get('/game/never');
  t.deepEqual([never.status, never.body], [504, error('GSF_ERR_HANDLER_TIMEOUT', 'GET /game/never: the handler did not answer within 3000 ms')]);
  t.true(Date.now() - started >= 2990);
  t.true(s.logs().some((l) => l.startsWith('W') && l.includes('GSF_ERR_HANDLER_TIMEOUT: GET /game/never: the handler did not answer within 3000 ms')));
  // Other requests in flight are answered meanwhile.
  const [slow, quick] = await Promise.all([http.get('/game/never'), http.get('/game/await')]);
  t.is(slow.status, 504);
  t.deepEqual([quick.status, quick.body], [200, { name: 'api.route-probe.GET.game.await', kind: 'api' }]);
});

test.serial('handlers that throw, reject or answer the wrong value get error answers and a log line naming the plugin', async (t) => {
  t.deepEqual(await http.get('/game/throws').then((r) => [r.status, r.body]), [500, error('GSF_ERR_INTERNAL', 'internal error: kaboom')]);
  t.deepEqual(await http.get('/game/rejects').then((r) => [r.status, r.body]), [409, error('GSF_ERR_CONFLICT', 'the game says no')]);
  t.deepEqual(await http.get('/game/wrong-kind').then((r) => [r.status, r.body]),
    [500, error('GSF_ERR_INTERNAL', 'internal error: GET /game/wrong-kind: the answer must be a JSON object, got undefined')]);
  await waitFor(() => s.logs().some((l) => l.includes("GSF_ERR_HANDLER_FAILED: plugin 'route-probe' route handler 'GET /game/throws' failed: kaboom")));
  t.pass();
});

test.serial('an answer leaves once the event is durable; a failure after answering drops the answer with the changes', async (t) => {
  t.deepEqual(await http.post('/game/notes/n1', '{"text":"hello"}').then((r) => [r.status, r.body]), [200, { id: 'n1' }]);
  t.deepEqual(await http.get('/game/notes/n1').then((r) => [r.status, r.body]), [200, { id: 'n1', text: 'hello', count: 0 }]);
  t.deepEqual(await http.post('/game/notes/n1/broken').then((r) => [r.status, r.body]),
    [500, error('GSF_ERR_INTERNAL', 'internal error: broken after answering')]);
  t.deepEqual(await http.get('/game/notes/n1').then((r) => r.body), { id: 'n1', text: 'hello', count: 0 });
  t.deepEqual(await http.get('/game/notes/n2').then((r) => [r.status, r.body]), [404, error('GSF_ERR_RESOURCE_NOT_FOUND', "no note 'n2'")]);
  // A note of a taken id: the commit conflicts at every rerun; the failure is the route's, not gsf's engine event's.
  const taken = await http.post('/game/notes/n1', '{"text":"again"}');
  t.is(taken.status, 500);
  const line = await waitFor(() => s.logs().find((l) => l.includes('still conflicted')), 10000, 'the conflict line');
  t.true(line.includes("GSF_ERR_HANDLER_FAILED: plugin 'route-probe' route handler 'POST /game/notes/n1' failed: object changes still "
    + "conflicted after 5 reruns (RouteNote 'n1' already exists); they are discarded"), line);
});

test.serial('native routes: the request as C sees it, answers from a thread, once only, a failing status', async (t) => {
  const echo = await http.get('/native/echo/hi?q=1');
  t.deepEqual([echo.status, echo.body], [200, {
    operation: 'route', method: 'GET', path: '/native/echo/hi', kind: 255,
    args: { method: 'GET', path: '/native/echo/hi', params: { word: 'hi' }, query: { q: '1' } },
  }]);
  const posted = await http.post('/native/echo', '{"n":[1,{"b":null}]}');
  t.deepEqual((posted.body as { args: unknown }).args, { method: 'POST', path: '/native/echo', params: {}, query: {}, body: { n: [1, { b: null }] } });
  const later = await http.get('/native/later');
  t.deepEqual([later.status, later.body], [200, 'from a plugin thread']);
  t.deepEqual(await http.get('/native/twice').then((r) => [r.status, r.body]), [200, true]);
  await waitFor(() => s.logs().some((l) => /route-native|native writer \d+: a second answer was ignored/.test(l) && l.includes('a second answer was ignored')));
  t.deepEqual(await http.get('/native/fails').then((r) => [r.status, r.body]), [404, error('GSF_ERR_RESOURCE_NOT_FOUND', 'no such thing')]);
  await waitFor(() => s.logs().some((l) => l.includes("plugin 'route-native' API handler 'route' failed: NOT_FOUND: no such thing")));
});

test.serial('native routes read and change objects in their event, committed before the answer', async (t) => {
  await http.post('/game/notes/n3', '{"text":"c"}');
  for (const count of [0, 1, 2]) {
    const r = await http.post('/native/notes/n3/count');
    t.deepEqual([r.status, r.body], [200, { id: 'n3', text: 'c', count }]);
  }
  t.deepEqual(await http.get('/game/notes/n3').then((r) => r.body), { id: 'n3', text: 'c', count: 3 });
  t.deepEqual(await http.post('/native/notes/none/count').then((r) => [r.status, r.body]), [404, error('GSF_ERR_RESOURCE_NOT_FOUND', 'no note')]);
});

test.serial('native reads the cache holds are answered in the native call; a read after a change sees the change', async (t) => {
  const reads = (): number => native.counterValue('object', 'native_cached_reads') ?? 0;
  await http.post('/game/notes/r1', '{"text":"one"}');
  await http.post('/game/notes/r2', '{"text":"two"}');
  // Both notes are in the cache (their creations put them there): two reads, both answered in native code.
  const before = reads();
  const pair = await http.get('/native/notes/r1/and/r2');
  t.deepEqual([pair.status, pair.body], [200, { first: { id: 'r1', text: 'one', count: 0 }, second: { id: 'r2', text: 'two', count: 0 } }]);
  t.is(reads() - before, 2);
  // The second note does not exist: the cache cannot tell, the database does (no object), as before.
  const missing = await http.get('/native/notes/r1/and/nothing');
  t.deepEqual([missing.status, missing.body], [200, { first: { id: 'r1', text: 'one', count: 0 }, second: null }]);
  t.is(reads() - before, 3);
  // After a change in the same event, a read gives the event's own copy, not the cache's.
  const bumped = await http.post('/native/notes/r2/bump-read');
  t.deepEqual([bumped.status, bumped.body], [200, { count: 1 }]);
  t.is(reads() - before, 3);
  t.deepEqual(await http.get('/native/notes/r2/and/r1').then((r) => r.body), { first: { id: 'r2', text: 'two', count: 1 }, second: { id: 'r1', text: 'one', count: 0 } });
  t.is(reads() - before, 5);
  // A read of a note that is not there, first: 404 from the handler.
  t.deepEqual(await http.get('/native/notes/nothing/and/r1').then((r) => [r.status, r.body]), [404, error('GSF_ERR_RESOURCE_NOT_FOUND', 'no note')]);
});

test.serial('every call writes one audit line without its body', async (t) => {
  await http.post('/game/body', '{"secret":"do-not-log-me"}');
  await waitFor(() => s.logs().some((l) => l.includes('api audit: method=POST, path=/game/body, status=200, duration_in_ms=')));
  const lines = s.logs().filter((l) => l.includes('api audit: method=GET, path=/game/kinds/void, status=204'));
  t.is(lines.length, 1);
  t.false(s.logs().some((l) => l.includes('do-not-log-me')));
});
