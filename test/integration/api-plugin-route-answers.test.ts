/**
 * Plugin routes' answers at their edges: values whose JSON is not what the writer promises, thrown
 * values JSON or String() cannot hold, an answer given before the handler finishes awaiting, a
 * bearer token after several spaces, and route patterns with dot segments.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from './_server.ts';
import { rawExchange, parseResponses } from './_raw-http.ts';

const TOKEN = 'sekret-token';
const PLUGIN = `import { definePlugin, GsfError } from 'gsf';
export default definePlugin({
  name: 'hp',
  version: '1.0.0',
  register(api) {
    api.http.route('GET', '/hp/tojson-undef', (_q, res) => res.json({ toJSON: () => undefined } as never));
    api.http.route('GET', '/hp/date', (_q, res) => res.json(new Date(0) as never));
    api.http.route('GET', '/hp/throw-nullproto', () => { throw Object.create(null); });
    api.http.route('GET', '/hp/throw-details', () => { throw new GsfError('GSF_ERR_CONFLICT', ['x'], { details: { n: 1n } as never }); });
    api.http.route('GET', '/hp/slow/{ms}', async (q, res) => { await new Promise((r) => setTimeout(r, Number(q.params.ms))); res.json({ slept: Number(q.params.ms) }); });
    api.http.route('GET', '/hp/answer-then-wait/{ms}', async (q, res) => { res.json({ answered: true }); await new Promise((r) => setTimeout(r, Number(q.params.ms))); });
    api.http.route('GET', '/hp/ok', (_q, res) => res.json({ ok: true }));
  },
});
`;

let s: TestServer | undefined;
let port: number;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-plugin-'));
fs.writeFileSync(path.join(dir, 'index.ts'), PLUGIN);

/** The shared server starts on first use (one gsf server per process: tests that start their own run first). */
async function ensure(): Promise<void> {
  if (s) return;
  s = await startTestServer({ ApiService: { api_service_handler_timeout_in_ms: 2000, api_service_token: TOKEN } }, [dir]);
  port = s.server.api.port;
}
test.after.always(async () => { await s?.stop(); });

const AUTH = { Authorization: `Bearer ${TOKEN}` };
async function get(p: string): Promise<{ status: number; body: unknown }> {
  await ensure();
  const r = await fetch(`http://127.0.0.1:${port}${p}`, { headers: AUTH });
  const text = await r.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* keep the text */ }
  return { status: r.status, body };
}

function pluginDir(name: string, routes: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `hp-${name}-`));
  fs.writeFileSync(path.join(d, 'index.ts'), `import { definePlugin } from 'gsf';
export default definePlugin({ name: '${name}', version: '1.0.0', register(api) { ${routes} } });
`);
  return d;
}

test.serial('a route pattern with a dot segment is refused at start (no standard client can reach it; /a/../v1/status is /v1/status)', async (t) => {
  let refusal = '';
  try {
    const started = await startTestServer({}, [pluginDir('dots', `api.http.route('GET', '/a/../v1/status', (_q, r) => r.json({ mine: true }));`)]);
    await started.stop();
  } catch (err) {
    refusal = (err as Error).message;
  }
  t.regex(refusal, /^plugin 'dots' .*'\/a\/\.\.\/v1\/status' has a '\.\.' segment, which clients remove before they send/);
});

test.serial('a request whose event times out is answered 504 at once, not at the handler deadline', async (t) => {
  const routes = `
    api.http.route('GET', '/late/await', async (_q, res) => { await new Promise((r) => setTimeout(r, 60000)); res.json({ late: true }); });
    api.http.route('GET', '/late/block', (_q, res) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000); res.json({ late: true }); });`;
  // The handler deadline (60 s) is far past the event timeout (300 ms): a 504 that names the event came from the timeout.
  const started = await startTestServer({ ApiService: { api_service_handler_timeout_in_ms: 60000 }, EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 300 } },
    [pluginDir('late', routes)]);
  try {
    for (const [path, why] of [['/late/await', 'timed out'], ['/late/block', 'timed out']]) {
      const r = await fetch(`http://127.0.0.1:${started.server.api.port}${path}`);
      t.is(r.status, 504, path);
      t.deepEqual(await r.json(), { error: 'GSF_ERR_HANDLER_EVENT_ENDED', message: `GET ${path}: the handler's event ${why} before it answered` });
    }
  } finally {
    await started.stop();
  }
});

test.serial('an answer whose JSON is undefined (toJSON) gets 500 at once, and does not end the event worker under other requests', async (t) => {
  await ensure();
  const slow = get('/hp/slow/300');
  const bad = await get('/hp/tojson-undef');
  const other = await slow;
  // Both answered (a lost answer would be a 504); no event worker ended.
  t.deepEqual([bad.status, bad.body, other.status, other.body, s!.logs().some((l) => l.includes('failed and is replaced'))],
    [500, { error: 'GSF_ERR_INTERNAL', message: 'internal error: GET /hp/tojson-undef: the answer must be a JSON object once written as JSON (its toJSON gave nothing)' }, 200, { slept: 300 }, false]);
});

test.serial('a handler that throws a value with no string form (Object.create(null)) gets 500 at once', async (t) => {
  const r = await get('/hp/throw-nullproto');
  t.deepEqual([r.status, r.body], [500, { error: 'GSF_ERR_INTERNAL', message: 'internal error: a thrown value with no string form ([object Object])' }]);
});

test.serial('a thrown GsfError whose details cannot be written as JSON still answers its status at once', async (t) => {
  const r = await get('/hp/throw-details');
  t.is(r.status, 409);
  t.like(r.body, { error: 'GSF_ERR_CONFLICT' });
});

test.serial('res.json(new Date()) is a wrong value (not a JSON object): 500, not 200 with a JSON string', async (t) => {
  const r = await get('/hp/date');
  t.deepEqual([r.status, r.body], [500, { error: 'GSF_ERR_INTERNAL', message: 'internal error: GET /hp/date: the answer must be a JSON object once written as JSON (its toJSON gave "1970-01-01T00:00:00.000Z")' }]);
});

test.serial('a read-only handler that answers and then keeps awaiting is answered at once, not 504 "did not answer"', async (t) => {
  // Held until the handler settles, it would be a 504 at the 2000 ms deadline.
  const r = await get('/hp/answer-then-wait/2500');
  t.deepEqual([r.status, r.body], [200, { answered: true }]);
});

test.serial('a bearer token after two spaces (RFC 6750: "Bearer" 1*SP b64token) is accepted on a plugin route', async (t) => {
  await ensure();
  const r = await rawExchange(port, [`GET /hp/ok HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer  ${TOKEN}\r\n\r\n`], (x) => x.includes('\r\n\r\n') && /Content-Length: (\d+)/i.test(x) && x.endsWith('}'), 5000);
  const [res] = parseResponses(r.text);
  t.deepEqual([res!.status, res!.body], [200, '{"ok":true}']);
});
