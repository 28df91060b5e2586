/**
 * The API service at its edges:
 * - The console page is served without the token (`GET /console/…`), and that opens no other
 *   route: a plugin route whose first segment is a parameter matches `/console/<x>` paths too,
 *   and still needs the bearer token there (rest.md "Access control").
 * - Two `PUT /v1/configurations/event_threads_size/{n}` at once: each is answered once its
 *   change took effect, and the one received last is what the flag and `/v1/status` show.
 * - Maintenance dates of the years 0000 to 0099 are compared as the instants they name:
 *   `date_end` before `date_start` is a 400.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, waitFor, writePlugin } from './_server.ts';
import { client } from './_http.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-public-prefix-'));
test.after.always(() => fs.rmSync(dir, { recursive: true, force: true }));

function plugin(name: string, body: string): string {
  return writePlugin(dir, name, body);
}

test.serial('a plugin route reached through a /console/ path still needs the token', async (t) => {
  const profiles = plugin('profiles', "api.http.route('GET', '/{player}/profile', (req, res) => res.json({ secret: 'profile of ' + req.params.player }));");
  const s = await startTestServer({ ApiService: { api_service_token: 's3cret' }, DeployApiService: {} }, [profiles]);
  try {
    const anonymous = client(s.server.api.port);
    const operator = client(s.server.api.port, 's3cret');
    // The route itself is guarded, and the console page is public: both as documented.
    t.is((await anonymous.get('/ada/profile')).status, 401);
    t.deepEqual((await operator.get('/ada/profile')).body, { secret: 'profile of ada' });
    t.is((await anonymous.get('/console/')).status, 200);
    // The same plugin route through the page's prefix.
    const r = await anonymous.get('/console/profile');
    t.deepEqual([r.status, r.body, r.headers.get('www-authenticate')],
      [401, { error: 'GSF_ERR_UNAUTHORIZED', message: 'missing or invalid bearer token' }, 'Bearer']);
  } finally {
    await s.stop();
  }
});

test.serial('a resize back to the current size while another resize runs is not lost', async (t) => {
  const s = await startTestServer(); // one event thread
  try {
    const api = client(s.server.api.port);
    const status = async (): Promise<number> => ((await api.get('/v1/status')).body as { event_threads_size: number }).event_threads_size;
    const grow = api.put('/v1/configurations/event_threads_size/2');
    // The server has the first PUT once /v1/status shows the size asked for (set at once).
    await waitFor(async () => (await status()) === 2, 20000, 'the first resize to begin');
    const back = await api.put('/v1/configurations/event_threads_size/1');
    const grown = await grow;
    t.deepEqual([grown.status, grown.body], [200, { event_threads_size: { result: 'event_threads_size set to 2\n' } }]);
    t.deepEqual([back.status, back.body], [200, { event_threads_size: { result: 'event_threads_size set to 1\n' } }]);
    // Both are answered: the later change is the one in effect.
    t.deepEqual((await api.get('/v1/configurations/event_threads_size')).body,
      { event_threads_size: { type: 'uint64', desc: 'Number of main event threads', value: '1' } });
    t.is(await status(), 1);
  } finally {
    await s.stop();
  }
});

test.serial('a date_end in year 0099 is before a date_start in 1998: 400, and nothing changes', async (t) => {
  const s = await startTestServer();
  try {
    const api = client(s.server.api.port);
    const before = (await api.get('/v1/maintenance')).body;
    const r = await fetch(`http://127.0.0.1:${s.server.api.port}/v1/maintenance/update`, {
      method: 'PUT', body: JSON.stringify({ date_start: '1998/06/01 00:00', date_end: '0099/01/01 00:00', messages: 'm' }),
    });
    t.deepEqual([r.status, await r.json()],
      [400, { error: 'GSF_ERR_BAD_REQUEST', message: "'date_end' must not be before 'date_start'", field: 'date_end' }]);
    t.deepEqual((await api.get('/v1/maintenance')).body, before);
  } finally {
    await s.stop();
  }
});

test.serial('a maintenance update or a compatible-versions list whose body is not UTF-8 is a 400, and nothing changes', async (t) => {
  const s = await startTestServer();
  try {
    const api = client(s.server.api.port);
    const before = [(await api.get('/v1/maintenance')).body, (await api.get('/v1/configurations/compatible_client_versions')).body];
    // A Latin-1 "é" (0xE9) where UTF-8 needs two bytes: decoding would put U+FFFD in the message.
    const notUtf8 = (json: string): Buffer => Buffer.from(json.replace('é', '\u00e9'), 'latin1');
    for (const [method, path, body] of [
      ['PUT', '/v1/maintenance/update', notUtf8('{"date_start":"2030/01/01 00:00","date_end":"2030/01/02 00:00","messages":"café"}')],
      ['POST', '/v1/configurations/compatible_client_versions', notUtf8('["1.0-é"]')],
    ] as const) {
      const r = await fetch(`http://127.0.0.1:${s.server.api.port}${path}`, { method, body });
      t.deepEqual([r.status, await r.json()], [400, { error: 'GSF_ERR_BAD_REQUEST', message: 'request body is not valid UTF-8' }], path);
    }
    t.deepEqual([(await api.get('/v1/maintenance')).body, (await api.get('/v1/configurations/compatible_client_versions')).body], before);
  } finally {
    await s.stop();
  }
});
