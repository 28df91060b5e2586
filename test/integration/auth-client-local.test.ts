/**
 * `use_authenticator` false (the default): every request succeeds in every form without any
 * request to an agent, for local testing.
 */
import test from 'ava';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { authenticationRequest, makeSocialnetAuthenticationKey } from '../../src/index.ts';
import type { Ask, AskRecord } from '../fixtures/plugins/auth-probe/index.ts';
import { startTestServer, waitFor, type TestServer } from './_server.ts';

let srv: TestServer;
let listener: net.Server;
let connections = 0;
let n = 0;

test.before(async () => {
  // A listener on the configured agent port that counts connections: there must be none.
  listener = net.createServer((s) => { connections++; s.destroy(); });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as net.AddressInfo).port;
  srv = await startTestServer({ AuthenticationClient: { remote_authenticator_port: port }, Logging: { v: 1 } }, ['auth-probe']);
});

test.after.always(async () => {
  await srv?.stop();
  listener?.close();
});

async function ask(form: Ask['form'], kind: Ask['kind']): Promise<AskRecord> {
  const label = `local-${++n}`;
  const file = path.join(srv.dir, `${label}.jsonl`);
  const request = authenticationRequest('socialnet', '100', makeSocialnetAuthenticationKey('anything-goes'));
  srv.server.invoke('auth_probe.ask', { file, label, form, kind, request } satisfies Ask);
  return JSON.parse(await waitFor(() => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : ''), 20000, label)) as AskRecord;
}

test.serial('every form succeeds without asking an agent', async (t) => {
  const ok = { success: true, reason_code: 0, reason_description: '' };
  for (const form of ['callback', 'async', 'sync'] as const) {
    const a = await ask(form, 'authentication');
    t.deepEqual(a.response, ok, form);
    t.false(a.error, form);
    t.deepEqual((await ask(form, 'personalinfo')).response, { ...ok, friends: [] }, form);
  }
  const bad = await ask('unknown-callback', 'authentication');
  t.deepEqual([bad.error_code, bad.response], ['GSF_ERR_UNKNOWN_EVENT', "no plugin registers an event named 'auth_probe.nobody'"]);
  t.is(connections, 0);
  t.true(srv.logs().some((l) => l.includes('AuthenticationClient: use_authenticator is false: every authentication request succeeds')));
});
