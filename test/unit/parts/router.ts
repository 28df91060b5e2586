import test from 'ava';
import { Router } from '../../../src/api/main/router.ts';

const ok = () => ({ status: 200 });

test('literal routes beat parameters; params are decoded', (t) => {
  const r = new Router();
  const a = () => ({ status: 201 });
  r.get('/v1/configurations/{flag}', ok);
  r.get('/v1/configurations/compatible_client_versions', a);
  const m1 = r.match('GET', '/v1/configurations/compatible_client_versions');
  t.is(m1.kind === 'found' && m1.handler, a);
  const m2 = r.match('GET', '/v1/configurations/my%20flag');
  t.deepEqual(m2.kind === 'found' && m2.params, { flag: 'my flag' });
});

test('rest parameters take the remaining path, slashes included', (t) => {
  const r = new Router();
  r.get('/v1/counters/{category}/{name*}', ok);
  const m = r.match('GET', '/v1/counters/event/performance/queue/');
  t.deepEqual(m.kind === 'found' && m.params, { category: 'event', name: 'performance/queue' });
  t.is(r.match('GET', '/v1/counters/event').kind, 'none');
});

test('wrong method reports the allowed ones; unknown path is none', (t) => {
  const r = new Router();
  r.get('/v1/x', ok);
  r.put('/v1/x', ok);
  t.deepEqual(r.match('POST', '/v1/x'), { kind: 'method', allowed: ['GET', 'HEAD', 'PUT'] });
  t.deepEqual(r.match('GET', '/v1/y'), { kind: 'none' });
  t.throws(() => r.get('/v1/x', ok), { message: 'route GET /v1/x is already registered' });
});

test('HEAD finds the GET route of a path, and only GET routes', (t) => {
  const r = new Router();
  const get = () => ({ status: 200 });
  r.get('/v1/x/{id}', get);
  r.post('/v1/y', ok);
  const m = r.match('HEAD', '/v1/x/7');
  t.is(m.kind === 'found' && m.handler, get);
  t.deepEqual(m.kind === 'found' && m.params, { id: '7' });
  t.deepEqual(r.match('HEAD', '/v1/y'), { kind: 'method', allowed: ['POST'] });
});
