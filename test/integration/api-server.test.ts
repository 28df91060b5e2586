import test from 'ava';
import net from 'node:net';
import { ApiServer } from '../../src/api/main/server.ts';
import { createLogger } from '../../src/log/logger.ts';

async function withServer(setup: (api: ApiServer) => void, run: (base: string) => Promise<void>): Promise<void> {
  const api = new ApiServer({ address: '127.0.0.1', port: 0, maxBodyBytes: 1024, log: createLogger({ get: (name) => (name === 'minloglevel' ? 3 : 0) }, { file: '', format: 'text' }) });
  setup(api);
  const port = await api.listen();
  try {
    await run(`http://127.0.0.1:${port}`);
  } finally {
    api.close();
  }
}

test('handlers read headers and the query before and after going asynchronous', async (t) => {
  let lateError: Error | null = null;
  await withServer((api) => {
    api.router.get('/sync', (req) => ({ status: 200, body: { probe: req.header('X-Probe'), q: req.query.get('q') } }));
    api.router.get('/async', async (req) => {
      await new Promise((r) => setTimeout(r, 20));
      return { status: 200, body: { probe: req.header('x-probe'), q: req.query.get('q'), missing: req.header('x-none') } };
    });
    api.router.get('/late', (req) => {
      setImmediate(() => {
        try {
          req.header('x-probe');
        } catch (err) {
          lateError = err as Error;
        }
      });
      return { status: 200, body: { ok: true } };
    });
    api.router.get('/async-early', async (req) => {
      const early = req.header('x-probe');
      await new Promise((r) => setTimeout(r, 5));
      return { status: 200, body: { early, late: req.header('x-probe') } };
    });
  }, async (base) => {
    const headers = { 'X-Probe': 'p-1' };
    t.deepEqual(await (await fetch(`${base}/sync?q=one`, { headers })).json(), { probe: 'p-1', q: 'one' });
    t.deepEqual(await (await fetch(`${base}/async?q=two`, { headers })).json(), { probe: 'p-1', q: 'two', missing: '' });
    t.deepEqual(await (await fetch(`${base}/async-early`, { headers })).json(), { early: 'p-1', late: 'p-1' });
    // Reading the request after a synchronous answer is an error, not an empty value.
    t.deepEqual(await (await fetch(`${base}/late`, { headers })).json(), { ok: true });
    await new Promise((r) => setTimeout(r, 20));
    t.is(lateError?.message, 'GET /late: the request was read after its synchronous handler returned');
  });
});

test('every method reaches the router: wrong ones get 405 with Allow, unknown paths 404', async (t) => {
  await withServer((api) => {
    api.router.get('/thing', () => ({ status: 200, body: { method: 'GET' } }));
    api.router.put('/thing', (req) => ({ status: 200, body: { method: req.method, body: req.body.toString() } }));
    api.router.add('DELETE', '/thing', (req) => ({ status: 200, body: { method: req.method } }));
    api.router.add('PATCH', '/thing', (req) => ({ status: 200, body: { method: req.method } }));
  }, async (base) => {
    const put = await fetch(`${base}/thing`, { method: 'PUT', body: 'x=1' });
    t.deepEqual(await put.json(), { method: 'PUT', body: 'x=1' });
    t.deepEqual(await (await fetch(`${base}/thing`, { method: 'DELETE' })).json(), { method: 'DELETE' });
    t.deepEqual(await (await fetch(`${base}/thing`, { method: 'PATCH' })).json(), { method: 'PATCH' });
    for (const method of ['POST', 'OPTIONS']) {
      const r = await fetch(`${base}/thing`, { method });
      t.is(r.status, 405, method);
      t.is(r.headers.get('allow'), 'DELETE, GET, HEAD, PATCH, PUT');
      t.deepEqual(await r.json(), {
        error: 'GSF_ERR_METHOD_NOT_ALLOWED', message: `method ${method} not allowed for /thing`, allowed: ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT'],
      });
    }
    const head = await fetch(`${base}/thing`, { method: 'HEAD' });
    t.is(head.status, 200);
    t.is(head.headers.get('content-length'), String('{"method":"GET"}'.length));
    const none = await fetch(`${base}/nothing`);
    t.is(none.status, 404);
    t.deepEqual(await none.json(), { error: 'GSF_ERR_NOT_FOUND', message: 'no route for GET /nothing' });
  });
});

test('path parameters are percent-decoded; one that is not valid percent-encoding of UTF-8 gets 400', async (t) => {
  await withServer((api) => {
    api.router.get('/v/{name}', (req) => ({ status: 200, body: { name: req.params.name } }));
    api.router.get('/files/{rest*}', (req) => ({ status: 200, body: { rest: req.params.rest } }));
  }, async (base) => {
    t.deepEqual(await (await fetch(`${base}/v/a%2Fb%20%E2%82%AC`)).json(), { name: 'a/b €' });
    t.deepEqual(await (await fetch(`${base}/files/x/%C3%A9`)).json(), { rest: 'x/é' });
    for (const [path, segment] of [['/v/%E0%A4', '%E0%A4'], ['/v/100%', '100%'], ['/v/%ZZ', '%ZZ'], ['/files/ok/%FF', '%FF'], ['/v/%ED%A0%80', '%ED%A0%80']]) {
      const r = await fetch(`${base}${path}`);
      t.is(r.status, 400, path);
      t.deepEqual(await r.json(), { error: 'GSF_ERR_BAD_REQUEST', message: `path segment '${segment}' is not valid percent-encoding of UTF-8` }, path);
    }
    // A method the route does not take is still 405; an unknown path 404.
    t.is((await fetch(`${base}/v/%E0`, { method: 'POST' })).status, 405);
    t.is((await fetch(`${base}/w/%E0`)).status, 404);
  });
});

test('a listener that cannot bind says why: the port is taken, the address is not here', async (t) => {
  const log = createLogger({ get: (name) => (name === 'minloglevel' ? 3 : 0) }, { file: '', format: 'text' });
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as net.AddressInfo).port;
  try {
    const api = new ApiServer({ address: '127.0.0.1', port, maxBodyBytes: 1024, log });
    await t.throwsAsync(api.listen(), { message: `ApiService: cannot listen on 127.0.0.1:${port} (EADDRINUSE: another process listens on this port)` });
  } finally {
    taken.close();
  }
  // TEST-NET-1 (RFC 5737): no interface of this machine has it.
  const away = new ApiServer({ address: '192.0.2.1', port: 0, maxBodyBytes: 1024, log });
  await t.throwsAsync(away.listen(), { message: 'ApiService: cannot listen on 192.0.2.1:0 (EADDRNOTAVAIL: this machine has no such address)' });
});
