/**
 * docs/guides/plugins.md, "Plugin REST routes", Audit: every request to a plugin route writes one
 * INFO line, `api audit: method=POST, path=/game/notes/n1, status=200, duration_in_ms=1.204`,
 * also when the route or the server refuses it before the handler runs (a body that is not JSON,
 * a query key `__proto__`, a body over the limit, a method the route does not serve, a path
 * segment that is not percent-encoding of UTF-8). A path no plugin route has is not audited.
 */
import test from 'ava';
import { startTestServer, waitFor, type TestServer } from './_server.ts';
import { client } from './_http.ts';

let s: TestServer;
let http: ReturnType<typeof client>;

test.before(async () => {
  s = await startTestServer({ ApiService: { api_service_max_body_bytes: 1024 } }, ['route-probe']);
  http = client(s.server.api.port);
});
test.after.always(async () => {
  await s?.stop();
});

const auditOf = (method: string, path: string, status: number): string | undefined =>
  s.logs().find((l) => l.includes(`api audit: method=${method}, path=${path}, status=${status}, duration_in_ms=`));

test.serial('plugin-route requests refused before their handler write an audit line too', async (t) => {
  const refused: Array<[string, string, number, () => Promise<{ status: number }>]> = [
    ['POST', '/game/body', 400, () => http.post('/game/body', 'not json')],
    ['GET', '/game/echo/hi', 400, () => http.get('/game/echo/hi?__proto__=1')],
    ['GET', '/game/echo/q', 400, () => http.get('/game/echo/q?e=%C3')],
    ['POST', '/game/body', 413, () => http.post('/game/body', JSON.stringify({ pad: 'x'.repeat(2000) }))],
    ['PUT', '/game/body', 405, () => http.put('/game/body')],
    ['GET', '/game/echo/%E0%A4', 400, () => http.get('/game/echo/%E0%A4')],
  ];
  for (const [, , status, send] of refused) t.is((await send()).status, status);
  // A request answered by its handler afterwards: its audit line is there once the refusals' would be.
  t.is((await http.get('/game/echo/after')).status, 200);
  await waitFor(() => auditOf('GET', '/game/echo/after', 200), 5000, 'the audit line of the answered request');
  for (const [method, path, status] of refused) {
    t.is(s.logs().filter((l) => l.includes(`api audit: method=${method}, path=${path}, status=${status}, `)).length, 1,
      `one audit line for ${method} ${path} answered ${status}`);
  }
  // No plugin route has this path: the 404 is not a plugin request, and is not audited.
  t.is((await http.get('/game/nothing/here')).status, 404);
  t.is((await http.get('/game/echo/last')).status, 200);
  await waitFor(() => auditOf('GET', '/game/echo/last', 200), 5000, 'the audit line of the last request');
  t.false(s.logs().some((l) => l.includes('path=/game/nothing/here')));
});
