/** Route patterns and their conflicts, console request reading, answer records, operation tags. */
import test from 'ava';
import { overlaps, parsePattern, segmentsOf } from '../../../src/api/route-patterns.ts';
import { AnswerKind, failureAnswer, nativeAnswer, ResponseWriter, thrownAnswer, type AnswerRecord } from '../../../src/api/writer.ts';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_STATUS, GsfError } from '../../../src/errors.ts';
import { NATIVE_STATUS_NAMES } from '../../../src/native.ts';
import { namedTag } from '../../../src/events/tags.ts';
import { OPERATIONS } from '../../../src/console/operations.ts';
import { operationTag } from '../../../src/console/feature.ts';
import { pageOf } from '../../../src/console/requests.ts';
import type { ApiRequest } from '../../../src/api/main/router.ts';
import type { Logger } from '../../../src/log/logger.ts';

const seg = (p: string): string[] => segmentsOf(p);

test('patterns: segments, parameters, a final rest parameter; bad ones say why', (t) => {
  t.deepEqual(parsePattern('/a/{b}/c/', 'r'), ['a', '{b}', 'c']);
  t.deepEqual(parsePattern('/files/{path*}', 'r'), ['files', '{path*}']);
  t.throws(() => parsePattern('/a/{b*}/c', 'r'), { message: "r: '{b*}' in '/a/{b*}/c' may only be the last segment" });
  t.throws(() => parsePattern('/a/{b}/{b}', 'r'), { message: "r: '/a/{b}/{b}' names parameter 'b' twice" });
  t.throws(() => parsePattern('/', 'r'), { message: "r: the path '/' names no resource" });
  t.throws(() => parsePattern('/a//b', 'r'), { message: "r: segment '' of '/a//b' must be a {parameter} or plain URL characters" });
  t.throws(() => parsePattern('/{1x}', 'r'), { message: "r: segment '{1x}' of '/{1x}' must be a {parameter} or plain URL characters" });
});

test('two patterns conflict when some path matches both', (t) => {
  t.true(overlaps(seg('/a/{x}'), seg('/a/{y}')));
  t.true(overlaps(seg('/a/{x}'), seg('/a/b')));
  t.true(overlaps(seg('/{x}/b'), seg('/a/{y}')));
  t.true(overlaps(seg('/v1/{rest*}'), seg('/v1/a/b/c')));
  t.false(overlaps(seg('/v1/{rest*}'), seg('/v1')));
  t.false(overlaps(seg('/a/b'), seg('/a/c')));
  t.false(overlaps(seg('/a/{x}'), seg('/a/{x}/c')));
  t.false(overlaps(seg('/a'), seg('/b/{x}')));
});

function request(query: string, params: Record<string, string> = {}): ApiRequest {
  return { method: 'GET', path: '/x', params, query: new URLSearchParams(query), header: () => '', body: Buffer.alloc(0) };
}

test('paging: defaults, bounds, exact refusals', (t) => {
  t.deepEqual(pageOf(request(''), 100), { page_no: 0, page_size: 20 });
  t.deepEqual(pageOf(request(''), 10), { page_no: 0, page_size: 10 });
  t.deepEqual(pageOf(request('page_no=3&page_size=100'), 100), { page_no: 3, page_size: 100 });
  for (const [q, message] of [
    ['page_size=101', "page_size must be an integer from 1 to 100 (got '101')"],
    ['page_size=', "page_size must be an integer from 1 to 100 (got '')"],
    ['page_size=1e2', "page_size must be an integer from 1 to 100 (got '1e2')"],
    ['page_no=-0', "page_no must be an integer >= 0 (got '-0')"],
    ['page_no=99999999999999999', "page_no must be an integer >= 0 (got '99999999999999999')"],
  ]) {
    const err = t.throws(() => pageOf(request(q!), 100)) as GsfError;
    t.deepEqual([err.status, err.toBody()], [400, { error: 'GSF_ERR_BAD_REQUEST', message }], q);
  }
});

test('operations run on the tag of the account or character their path names, others on random tags', (t) => {
  const op = (name: string) => OPERATIONS.find((o) => o.name === name)!;
  t.is(operationTag(op('GetUser'), request('', { id: 'ada' })), namedTag('account:ada'));
  t.is(operationTag(op('BanUser'), request('', { id: 'ada' })), namedTag('account:ada'));
  t.is(operationTag(op('GetCharacter'), request('', { id: 'c1' })), namedTag('character:c1'));
  const a = operationTag(op('GiveGift'), request(''));
  const b = operationTag(op('GiveGift'), request(''));
  t.not(a, b);
  t.true(a >= 2 ** 32 && b >= 2 ** 32);
  // Native table places are 1 to 22, in order, each once.
  t.deepEqual(OPERATIONS.map((o) => o.native), Array.from({ length: 22 }, (_, i) => i + 1));
});

test('answer records: failures by status, thrown errors, native answers', (t) => {
  t.deepEqual(failureAnswer(1, 2, "no account 'x'"), [1, 404, '{"error":"GSF_ERR_RESOURCE_NOT_FOUND","message":"no account \'x\'"}']);
  t.deepEqual(failureAnswer(1, 5, 'broke'), [1, 500, '{"error":"GSF_ERR_INTERNAL","message":"internal error: broke"}']);
  t.deepEqual(failureAnswer(1, 9, ''), [1, 429, '{"error":"GSF_ERR_TOO_MANY_REQUESTS","message":"the handler answered RESOURCE_EXHAUSTED"}']);
  t.deepEqual(failureAnswer(1, 77, 'odd'), [1, 500, '{"error":"GSF_ERR_INTERNAL","message":"internal error: odd"}']);
  t.deepEqual(thrownAnswer(2, new GsfError('GSF_ERR_CONFLICT', ['taken'])), [2, 409, '{"error":"GSF_ERR_CONFLICT","message":"taken"}']);
  t.deepEqual(thrownAnswer(2, 'plain'), [2, 500, '{"error":"GSF_ERR_INTERNAL","message":"internal error: plain"}']);
  t.deepEqual(nativeAnswer(3, 0, null, ''), [3, 204, null]);
  t.deepEqual(nativeAnswer(3, 0, '[1]', ''), [3, 200, '[1]']);
  t.deepEqual(nativeAnswer(3, 3, null, 'taken'), [3, 409, '{"error":"GSF_ERR_CONFLICT","message":"taken"}']);
});

test('a writer answers once, in its kind; wrong values throw and answer nothing', (t) => {
  const delivered: AnswerRecord[] = [];
  const warnings: string[] = [];
  const log = { warn: (m: string) => warnings.push(m) } as unknown as Logger;
  const call = { rid: 9, label: 'GET /x', answered: false };
  const w = new ResponseWriter(call, AnswerKind.jsonArray, { deliver: (_c, r) => delivered.push(r) }, log);
  t.throws(() => w.ok({ a: 1 }), { message: 'GET /x: the answer must be a JSON array, got object' });
  t.throws(() => w.bool(true), { message: 'GET /x: this request answers a JSON array, not a bool' });
  t.throws(() => w.fail('OK' as never), { message: 'fail: status must be a failure status (INVALID_ARGUMENT … EXPIRED, 1 to 10), got OK' });
  t.false(w.answered);
  w.ok([1, 'a']);
  w.fail('NOT_FOUND', 'late');
  t.deepEqual(delivered, [[9, 200, '[1,"a"]']]);
  t.deepEqual(warnings, ['GET /x: a second answer (fail(NOT_FOUND)) was ignored; a request is answered once']);
  const json = new ResponseWriter({ rid: 1, label: 'q', answered: false }, AnswerKind.json, { deliver: (_c, r) => delivered.push(r) }, log);
  json.ok([{ a: 1 }]);
  t.deepEqual(delivered[1], [1, 200, '[{"a":1}]']);
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const any = new ResponseWriter({ rid: 2, label: 'r', answered: false }, AnswerKind.any, { deliver: (_c, r) => delivered.push(r) }, log);
  t.throws(() => any.json(circular), { message: /^r: the answer cannot be written as JSON: / });
  t.false(any.answered);
});

test('the table of handler statuses in docs/reference/errors.md is API_STATUS, and the statuses are the native ones in order', (t) => {
  const doc = fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'reference', 'errors.md'), 'utf8');
  const start = doc.indexOf('\n## Handler statuses\n');
  t.true(start >= 0, 'a Handler statuses section');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  const rows = section.split('\n').filter((l) => /^\| `[A-Z_]+` \|/.test(l)).map((l) => l.split('|').slice(1, 4).map((c) => c.trim()));
  t.deepEqual(rows, API_STATUS.map((e) => [`\`${e.name}\``, String(e.http), e.code === null ? '(the writer\'s answer; 204 for void)' : `\`${e.code}\``]));
  t.deepEqual(API_STATUS.map((e) => e.name), NATIVE_STATUS_NAMES);
});
