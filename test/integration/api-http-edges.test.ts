/**
 * The API-service listener at the HTTP edges, on raw sockets: HEAD, bodiless statuses, thrown
 * errors, and what the client sees for requests uWebSockets.js refuses before gsf sees them
 * (the README's "Requests gsf cannot answer").
 */
import test from 'ava';
import { ApiServer, MAX_PATH_BYTES } from '../../src/api/main/server.ts';
import { createLogger } from '../../src/log/logger.ts';
import { gsfError } from '../../src/errors.ts';
import { hasResponses, parseResponses, rawExchange } from './_raw-http.ts';

const THING = { thing: 'a value', n: 42 };

async function withServer(run: (port: number, logged: string[]) => Promise<void>, after?: (logged: string[]) => void): Promise<void> {
  const logged: string[] = [];
  const log = createLogger({ get: (name) => (name === 'minloglevel' ? 0 : name === 'v' ? 0 : false) }, { file: '', format: 'text' });
  const api = new ApiServer({
    address: '127.0.0.1', port: 0, maxBodyBytes: 1024,
    log: { ...log, error: (msg) => { logged.push(msg); } },
  });
  api.router.get('/thing', () => ({ status: 200, body: THING }));
  api.router.post('/thing', () => ({ status: 200, body: { posted: true } }));
  api.router.get('/text', () => ({ status: 200, body: 'héllo', headers: { 'X-Extra': 'yes' } }));
  api.router.get('/empty', () => ({ status: 204, body: { ignored: true } }));
  api.router.get('/cached', () => ({ status: 304, headers: { ETag: '"v1"' }, body: THING }));
  api.router.get('/gone', () => { throw gsfError('GSF_ERR_COUNTER_NOT_FOUND', "no counter 'x' in category 'y'"); });
  api.router.get('/gone-later', async () => {
    await new Promise((r) => setImmediate(r));
    throw gsfError('GSF_ERR_PROFILER_DISABLED');
  });
  api.router.get('/broken', () => { throw new Error('wires crossed'); });
  const port = await api.listen();
  try {
    await run(port, logged);
  } finally {
    api.close();
  }
  after?.(logged);
}

const req = (method: string, path: string, extra = ''): string => `${method} ${path} HTTP/1.1\r\nHost: t\r\n${extra}\r\n`;

test('HEAD answers every GET route with its status and headers and no body, keeping a keep-alive connection in step', async (t) => {
  await withServer(async (port) => {
    const order = [['HEAD', '/thing'], ['GET', '/thing'], ['HEAD', '/text'], ['GET', '/text'], ['HEAD', '/nothing'], ['GET', '/nothing'], ['HEAD', '/gone'], ['GET', '/gone']];
    const heads = order.map(([m]) => m === 'HEAD');
    const r = await rawExchange(port, [order.map(([m, p]) => req(m!, p!)).join('')], (text) => hasResponses(text, order.length, heads));
    t.is(r.end, 'matched');
    const res = parseResponses(r.text, heads);
    t.is(res.length, order.length);
    for (let i = 0; i < order.length; i += 2) {
      const [head, get] = [res[i]!, res[i + 1]!];
      const what = order[i]![1]!;
      t.is(head.body, '', what);
      t.is(head.status, get.status, what);
      t.is(head.headers.get('content-type'), get.headers.get('content-type'), what);
      t.is(head.headers.get('content-length'), String(Buffer.byteLength(get.body, 'latin1')), what);
    }
    t.deepEqual(JSON.parse(res[1]!.body), THING);
    t.is(res[2]!.headers.get('x-extra'), 'yes');
    t.is(Buffer.from(res[3]!.body, 'latin1').toString('utf8'), 'héllo');
    t.is(res[4]!.status, 404);
    t.deepEqual(JSON.parse(res[5]!.body), { error: 'GSF_ERR_NOT_FOUND', message: 'no route for GET /nothing' });
    t.is(res[6]!.status, 404);
  });
});

test('204 and 304 carry no body and no Content-Length, and the connection stays usable', async (t) => {
  await withServer(async (port) => {
    const r = await rawExchange(port, [req('GET', '/empty') + req('GET', '/cached') + req('HEAD', '/empty') + req('GET', '/thing')],
      (text) => hasResponses(text, 4, [false, false, true]));
    const [empty, cached, headEmpty, thing] = parseResponses(r.text, [false, false, true]);
    t.is(empty!.status, 204);
    t.false(empty!.headers.has('content-length'));
    t.false(empty!.headers.has('content-type'));
    t.is(cached!.status, 304);
    t.false(cached!.headers.has('content-length'));
    t.is(cached!.headers.get('etag'), '"v1"');
    t.is(headEmpty!.status, 204);
    t.false(headEmpty!.headers.has('content-length'));
    // The next response starts right where the bodiless ones end.
    t.is(thing!.status, 200);
    t.deepEqual(JSON.parse(thing!.body), THING);
  });
});

test('a thrown or rejected GsfError answers with its status and JSON body; anything else is a logged 500', async (t) => {
  await withServer(async (port, logged) => {
    const base = `http://127.0.0.1:${port}`;
    const gone = await fetch(`${base}/gone`);
    t.is(gone.status, 404);
    t.deepEqual(await gone.json(), { error: 'GSF_ERR_COUNTER_NOT_FOUND', message: "no counter 'x' in category 'y'" });
    const later = await fetch(`${base}/gone-later`);
    t.is(later.status, 409);
    t.deepEqual(await later.json(), {
      error: 'GSF_ERR_PROFILER_DISABLED', message: 'event profiling is off; turn it on with PUT /v1/configurations/enable_event_profiler/true',
    });
    t.deepEqual(logged, []);
    const broken = await fetch(`${base}/broken`);
    t.is(broken.status, 500);
    t.deepEqual(await broken.json(), { error: 'GSF_ERR_INTERNAL', message: 'internal error: wires crossed' });
    t.deepEqual(logged, ['GSF_ERR_INTERNAL: GET /broken failed: wires crossed']);
  });
});

test('methods uWebSockets.js routes get 405 with Allow; any other method closes the connection unanswered', async (t) => {
  await withServer(async (port) => {
    for (const method of ['OPTIONS', 'TRACE', 'DELETE', 'PATCH']) {
      const r = await rawExchange(port, [req(method, '/thing')], (text) => hasResponses(text, 1));
      const [res] = parseResponses(r.text);
      t.is(res!.status, 405, method);
      t.is(res!.headers.get('allow'), 'GET, HEAD, POST', method);
      t.deepEqual(JSON.parse(res!.body), {
        error: 'GSF_ERR_METHOD_NOT_ALLOWED', message: `method ${method} not allowed for /thing`, allowed: ['GET', 'HEAD', 'POST'],
      });
    }
    for (const method of ['FOO', 'PROPFIND', 'get', 'Get']) {
      const r = await rawExchange(port, [req(method, '/thing')]);
      t.deepEqual([r.end, r.text], ['closed', ''], method);
    }
  });
});

test('a path over the limit gets 414 when uWebSockets.js passes it; heads it cannot parse close unanswered', async (t) => {
  await withServer(async (port) => {
    const long = `/${'p'.repeat(MAX_PATH_BYTES)}`;
    const r = await rawExchange(port, [req('GET', long)], (text) => hasResponses(text, 1));
    const [res] = parseResponses(r.text);
    t.is(res!.status, 414);
    t.deepEqual(JSON.parse(res!.body), { error: 'GSF_ERR_URI_TOO_LONG', message: `request path exceeds ${MAX_PATH_BYTES} bytes` });
    const atLimit = await rawExchange(port, [req('GET', long.slice(0, MAX_PATH_BYTES))], (text) => hasResponses(text, 1));
    t.is(parseResponses(atLimit.text)[0]!.status, 404);

    let many = '';
    for (let i = 0; i < 500; i++) many += `X-Header-${i}: v\r\n`;
    const cases: Array<[string, string]> = [
      ['200 KB path', req('GET', `/${'p'.repeat(200 * 1024)}`)],
      ['1 MB header', req('GET', '/thing', `X-Big: ${'b'.repeat(1024 * 1024)}\r\n`)],
      ['500 header fields', req('GET', '/thing', many)],
      ['Content-Length with Transfer-Encoding', req('POST', '/thing', 'Content-Length: 1\r\nTransfer-Encoding: chunked\r\n')],
    ];
    for (const [what, bytes] of cases) {
      const closed = await rawExchange(port, [bytes]);
      t.is(closed.text, '', what);
      t.not(closed.end, 'matched', what);
    }
    // The listener serves the next client as usual.
    const after = await fetch(`http://127.0.0.1:${port}/thing`);
    t.deepEqual(await after.json(), THING);
  });
});

test('heads uWebSockets.js waits on are closed unanswered at its idle timeout: HTTP/1.0, over 48 header fields, no Host', async (t) => {
  await withServer(async (port) => {
    let fields = '';
    for (let i = 0; i < 48; i++) fields += `X-Header-${i}: v\r\n`;
    const [old, crowded, hostless, fine] = await Promise.all([
      rawExchange(port, ['GET /thing HTTP/1.0\r\nHost: t\r\n\r\n']),
      rawExchange(port, [req('GET', '/thing', fields)]),
      rawExchange(port, ['GET /thing HTTP/1.1\r\n\r\n']),
      rawExchange(port, [req('GET', '/thing', fields.split('\r\n').slice(0, 47).join('\r\n') + '\r\n')], (text) => hasResponses(text, 1)),
    ]);
    // 47 fields and Host: answered at once.
    t.is(parseResponses(fine.text)[0]!.status, 200);
    for (const [what, r] of [['HTTP/1.0', old], ['48 fields and Host', crowded], ['no Host', hostless]] as const) {
      t.is(r.text, '', what);
      t.is(r.end, 'closed', what);
      // Held open, not refused: uWS's 10 s idle timeout runs on a 4 s clock.
      t.true(r.ms >= 4000, `${what} closed after ${r.ms} ms`);
    }
  });
});

test('a handler failing on every request writes at most 5 lines per second and a summary of the rest', async (t) => {
  let seconds = 0;
  await withServer(async (port) => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`http://127.0.0.1:${port}/broken`).then((r) => r.status)));
    // The whole seconds the requests were logged in; on a loaded machine they can span more than three.
    seconds = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
    t.deepEqual(new Set(answers), new Set([500]));
  }, (logged) => {
    const exact = logged.filter((l) => l === 'GSF_ERR_INTERNAL: GET /broken failed: wires crossed');
    const summaries = logged.filter((l) => l !== exact[0]);
    const suppressed = summaries.map((l) => Number(/^suppressed (\d+) more line\(s\) of 'GET \/broken' in one second/.exec(l)![1]));
    // The requests may straddle second boundaries: up to 5 lines for each second, the rest counted.
    t.true(exact.length >= 5 && exact.length <= 5 * seconds, `${exact.length} lines in ${seconds} second(s)`);
    t.true(summaries.length >= 1);
    t.is(exact.length + suppressed.reduce((a, b) => a + b, 0), 40);
  });
});
