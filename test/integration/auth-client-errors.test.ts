/**
 * System errors of the AuthenticationClient, against an agent stand-in that hangs, drops the
 * connection or answers nonsense: the callback gets `error` true, the promise rejects with a
 * GSF_ERR_AUTH_* code, the sync form returns false.
 */
import test from 'ava';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { authenticationRequest } from '../../src/index.ts';
import type { Ask, AskRecord } from '../fixtures/plugins/auth-probe/index.ts';
import { startTestServer, waitFor, type TestServer } from './_server.ts';

let srv: TestServer;
let stand: http.Server;
let port = 0;
let n = 0;

test.before(async () => {
  stand = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString(); });
    req.on('end', () => {
      const id = (JSON.parse(body) as { player_id: string }).player_id;
      if (id === 'hang') return; // never answers
      if (id === 'drop') {
        req.socket.destroy();
        return;
      }
      if (id === 'http500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      // 'nofriends' (asked for personal info) and everyone else get a bare success.
      res.end(id === 'garbage' ? 'not json at all' : id === 'noresult' ? '{"ok":true}' : '{"result":0,"description":""}');
    });
  });
  await new Promise<void>((r) => stand.listen(0, '127.0.0.1', r));
  port = (stand.address() as AddressInfo).port;
  // Long enough that an answer never times out on a machine busy with other suites (300 ms did
  // once, with the HTTP 500 answer), short enough for the hanging case.
  srv = await startTestServer({
    EventDispatcher: { event_threads_size: 2 },
    AuthenticationClient: { use_authenticator: true, remote_authenticator_port: port, authenticator_request_timeout_in_ms: 1500 },
  }, ['auth-probe']);
});

test.after.always(async () => {
  await srv?.stop();
  stand?.closeAllConnections();
  stand?.close();
});

async function ask(form: Ask['form'], playerId: string, kind: Ask['kind'] = 'authentication'): Promise<AskRecord> {
  const label = `err-${++n}`;
  const file = path.join(srv.dir, `${label}.jsonl`);
  srv.server.invoke('auth_probe.ask', { file, label, form, kind, request: authenticationRequest('test', playerId) } satisfies Ask);
  return JSON.parse(await waitFor(() => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : ''), 20000, label)) as AskRecord;
}

const CASES: Array<[string, string, string, Ask['kind']?]> = [
  ['hang', 'GSF_ERR_AUTH_TIMEOUT', 'did not answer within 1500 ms'],
  ['drop', 'GSF_ERR_AUTH_UNREACHABLE', 'is unreachable (UND_ERR_SOCKET)'],
  ['http500', 'GSF_ERR_AUTH_BAD_ANSWER', 'gave an unexpected answer: HTTP 500'],
  ['garbage', 'GSF_ERR_AUTH_BAD_ANSWER', 'gave an unexpected answer: the body is not JSON'],
  ['noresult', 'GSF_ERR_AUTH_BAD_ANSWER', 'gave an unexpected answer: no integer result and string description'],
  ['nofriends', 'GSF_ERR_AUTH_BAD_ANSWER', 'gave an unexpected answer: no friends array of strings', 'personalinfo'],
];

for (const [id, code, text, kind] of CASES) {
  test.serial(`system error (${id}): callback error flag, promise rejection, sync false`, async (t) => {
    const cb = await ask('callback', id, kind);
    t.true(cb.error);
    t.is(cb.response, null);
    t.is(cb.error_code, code);
    t.is(cb.kind, 'engine');
    const p = await ask('async', id, kind);
    t.true(p.error);
    t.is(p.error_code, code);
    const s = await ask('sync', id, kind);
    t.is(s.response, false);
    t.true(s.error);
    t.is(s.error_code, code);
    t.true(srv.logs().some((l) => l.includes(`${code}: authenticator at 127.0.0.1:${port} ${text}`)), text);
  });
}

test.serial('after a system error the sync form works again and clears lastSyncError', async (t) => {
  const s = await ask('sync', 'fine');
  t.deepEqual(s.response, { success: true, reason_code: 0, reason_description: '' });
  t.is(s.error_code, undefined);
});
