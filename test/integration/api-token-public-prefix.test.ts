/**
 * The console page is served without the token (`GET /console/…`), and that opens no other
 * route: a plugin route whose first segment is a parameter matches `/console/<x>` paths
 * too, and still needs the bearer token there (rest.md "Access control": every request but
 * the console page and its assets needs `Authorization: Bearer <token>`).
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer } from './_server.ts';
import { client } from './_http.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-public-prefix-'));
test.after.always(() => fs.rmSync(dir, { recursive: true, force: true }));

function plugin(name: string, body: string): string {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'index.ts'),
    `import { definePlugin } from 'gsf';\nexport default definePlugin({ name: '${name}', version: '1.0.0', register(api) {\n${body}\n} });\n`);
  return folder;
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
