import test from 'ava';
import { CloseCode, GsfClient } from '../../src/sdk/index.ts';
import { apiUrl, startSessionServer, type SessionServer } from './_session.ts';
import { parseManifest } from '../../src/config/manifest.ts';

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({ AppInfo: { client_current_version: '2.0.0', client_compatible_versions: ['1.9.0', '1.9.1'] } });
});
test.after.always(async () => {
  await s?.stop();
});

const ACCEPTED = 'accepted';

/**
 * Connects with `version` and sends one request: 'accepted' if it is answered, else the close
 * code and reason the server sent (a refusal closes the socket right after the upgrade).
 */
async function outcome(version: string, codec: 'json' | 'msgpack' = 'json'): Promise<typeof ACCEPTED | { code: number; reason: string }> {
  const c = await GsfClient.connect({ url: s.url, version, codec });
  const answer = await c.request('echo', version).then((body) => ({ body }), (err: Error) => ({ err }));
  if ('err' in answer) {
    // A refusal fails the request because the socket closed: the close tells why.
    const timer = new Promise<null>((r) => setTimeout(() => r(null), 5000).unref());
    const info = await Promise.race([c.closed, timer]);
    if (info === null) throw new Error(`version '${version}': ${answer.err.message}, and the connection stayed open`);
    return { code: info.code, reason: info.reason };
  }
  const result = answer;
  await c.close();
  return result.body === version ? ACCEPTED : { code: -1, reason: `echo answered ${JSON.stringify(result.body)}` };
}

const refused = (version: string, required: string): { code: number; reason: string } => ({
  code: CloseCode.versionRefused,
  reason: `client version '${version}' is not accepted; required version: ${required}`,
});

test.serial('the current version and the compatible ones are accepted', async (t) => {
  t.is(await outcome('2.0.0'), ACCEPTED);
  t.is(await outcome('1.9.0'), ACCEPTED);
  t.is(await outcome('1.9.1', 'msgpack'), ACCEPTED);
});

test.serial('any other version is refused with 4001 and a reason naming the required version', async (t) => {
  t.deepEqual(await outcome('1.0.0', 'msgpack'), refused('1.0.0', '2.0.0 (also accepted: 1.9.0, 1.9.1)'));
  t.deepEqual(await outcome(''), refused('', '2.0.0 (also accepted: 1.9.0, 1.9.1)'));
});

test.serial('replacing the compatible list and the current version applies to the next connection', async (t) => {
  const post = await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`, { method: 'POST', body: JSON.stringify(['1.8.0']) });
  t.is(post.status, 200);
  t.deepEqual(await outcome('1.9.0'), refused('1.9.0', '2.0.0 (also accepted: 1.8.0)'));
  t.is(await outcome('1.8.0'), ACCEPTED);
  t.deepEqual(await outcome('1.9.1', 'msgpack'), refused('1.9.1', '2.0.0 (also accepted: 1.8.0)'));
  const put = await fetch(`${apiUrl(s)}/v1/configurations/client_current_version/2.1.0`, { method: 'PUT' });
  t.is(put.status, 200);
  t.deepEqual(await outcome('2.0.0'), refused('2.0.0', '2.1.0 (also accepted: 1.8.0)'));
  t.is(await outcome('2.1.0'), ACCEPTED);
  const empty = await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`, { method: 'POST', body: '[]' });
  t.is(empty.status, 200);
  t.deepEqual(await outcome('1.8.0'), refused('1.8.0', '2.1.0'));
});

test.serial('a long client version is cut short in the reason, so the required version still shows', async (t) => {
  const post = await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`, { method: 'POST', body: '["1.9.0"]' });
  t.is(post.status, 200);
  const version = `${'v'.repeat(23)}é${'v'.repeat(176)}`;
  t.deepEqual(await outcome(version), refused(`${'v'.repeat(23)}é…`, `${await currentVersion()} (also accepted: 1.9.0)`));
});

test.serial('an empty entry is refused in the compatible list: no client could send it', async (t) => {
  const before = await (await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`)).json();
  const post = await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`, { method: 'POST', body: '["1.9.0", ""]' });
  t.is(post.status, 400);
  t.deepEqual(await post.json(), { error: 'GSF_ERR_BAD_REQUEST', message: 'body must be a JSON array of non-empty strings (entry 1 is empty)' });
  t.deepEqual(await (await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`)).json(), before);
  const err = t.throws(() => parseManifest({ components: [{ name: 'AppInfo', arguments: { client_compatible_versions: ['1.0', ''] } }] }, 'M.json', '.'));
  t.regex(err.message, /AppInfo\.client_compatible_versions must be an array of non-empty strings \(entry 1 is empty\)/);
});

async function currentVersion(): Promise<string> {
  const body = await (await fetch(`${apiUrl(s)}/v1/configurations/client_current_version`)).json() as Record<string, { value: string }>;
  return body.client_current_version!.value;
}

test.serial('idle_timeout_in_sec between 1 and 7 stops the start', async (t) => {
  await s.stop();
  const err = await t.throwsAsync(startSessionServer({ SessionService: { idle_timeout_in_sec: 5 } }));
  t.is(err.message, '(inline manifest): SessionService.idle_timeout_in_sec must be 0 (off) or at least 8, got 5');
});
