/** The console's audit trail: a ring of the newest changes, paged newest first; operator names. */
import test from 'ava';
import { AuditTrail, operatorOf } from '../../../src/console/audit-trail.ts';
import type { ApiRequest } from '../../../src/api/main/router.ts';

const paths = (entries: Array<{ path: string }>): string[] => entries.map((e) => e.path);

test('pages run newest first, across the ring once it is full', (t) => {
  const trail = new AuditTrail(4);
  t.deepEqual(trail.page(0, 10), []);
  for (let i = 1; i <= 3; i++) trail.record('', 'POST', `/p${i}`, 204, 1);
  t.is(trail.size, 3);
  t.deepEqual(paths(trail.page(0, 10)), ['/p3', '/p2', '/p1']);
  for (let i = 4; i <= 9; i++) trail.record('', 'POST', `/p${i}`, 204, 1);
  t.is(trail.size, 4);
  t.deepEqual(paths(trail.page(0, 10)), ['/p9', '/p8', '/p7', '/p6']);
  t.deepEqual(paths(trail.page(0, 3)), ['/p9', '/p8', '/p7']);
  t.deepEqual(paths(trail.page(1, 3)), ['/p6']);
  t.deepEqual(paths(trail.page(2, 3)), []);
  t.deepEqual(paths(trail.page(Number.MAX_SAFE_INTEGER, 100)), []);
});

test('an entry carries its time, operator, request, status and rounded duration', (t) => {
  const trail = new AuditTrail();
  trail.record('anna', 'PUT', '/cs-api/v1/account/ada/score/5/', 204, 1.23456);
  const [e] = trail.page(0, 1);
  t.regex(e!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.like(e, { operator: 'anna', method: 'PUT', path: '/cs-api/v1/account/ada/score/5/', status: 204, duration_in_ms: 1.235 });
});

const request = (operator: string): ApiRequest => ({
  method: 'POST', path: '/', params: {}, query: new URLSearchParams(), body: Buffer.alloc(0),
  header: (name) => (name === 'x-gsf-operator' ? operator : ''),
});

test('the operator is the percent-decoded, trimmed header; bad ones are 400', (t) => {
  t.is(operatorOf(request('')), '');
  t.is(operatorOf(request('anna')), 'anna');
  t.is(operatorOf(request(encodeURIComponent(' Zoë O '))), 'Zoë O');
  t.is(operatorOf(request('é'.repeat(64))), 'é'.repeat(64));
  t.throws(() => operatorOf(request('%zz')), { message: "header 'X-Gsf-Operator' must be percent-encoded UTF-8" });
  t.throws(() => operatorOf(request('a%09b')), { message: "header 'X-Gsf-Operator' must not hold control characters" });
  t.throws(() => operatorOf(request('x'.repeat(65))), { message: "header 'X-Gsf-Operator' must be at most 64 characters" });
});
