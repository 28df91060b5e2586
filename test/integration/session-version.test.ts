import test from 'ava';
import { CloseCode, GsfClient } from '../../src/sdk/index.ts';
import { apiUrl, startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({ AppInfo: { client_current_version: '2.0.0', client_compatible_versions: ['1.9.0', '1.9.1'] } });
});
test.after.always(async () => {
  await s?.stop();
});

async function accepted(version: string): Promise<boolean> {
  const c = await GsfClient.connect({ url: s.url, version, codec: 'json' });
  const answer = await c.request('echo', version).then(() => true, () => false);
  await c.close();
  return answer;
}

async function refusal(version: string): Promise<{ code: number; reason: string }> {
  const c = await GsfClient.connect({ url: s.url, version, codec: 'msgpack' });
  return c.closed;
}

test.serial('the current version and the compatible ones are accepted', async (t) => {
  t.true(await accepted('2.0.0'));
  t.true(await accepted('1.9.0'));
  t.true(await accepted('1.9.1'));
});

test.serial('any other version is refused with 4001 and a reason naming the required version', async (t) => {
  t.deepEqual(await refusal('1.0.0'), {
    code: CloseCode.versionRefused,
    reason: "client version '1.0.0' is not accepted; required version: 2.0.0 (also accepted: 1.9.0, 1.9.1)",
  });
  t.deepEqual(await refusal(''), {
    code: CloseCode.versionRefused,
    reason: "client version '' is not accepted; required version: 2.0.0 (also accepted: 1.9.0, 1.9.1)",
  });
});

test.serial('replacing the compatible list and the current version applies to the next connection', async (t) => {
  const post = await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`, { method: 'POST', body: JSON.stringify(['1.8.0']) });
  t.is(post.status, 200);
  t.false(await accepted('1.9.0'));
  t.true(await accepted('1.8.0'));
  t.deepEqual(await refusal('1.9.1'), {
    code: CloseCode.versionRefused,
    reason: "client version '1.9.1' is not accepted; required version: 2.0.0 (also accepted: 1.8.0)",
  });
  const put = await fetch(`${apiUrl(s)}/v1/configurations/client_current_version/2.1.0`, { method: 'PUT' });
  t.is(put.status, 200);
  t.false(await accepted('2.0.0'));
  t.true(await accepted('2.1.0'));
  const empty = await fetch(`${apiUrl(s)}/v1/configurations/compatible_client_versions`, { method: 'POST', body: '[]' });
  t.is(empty.status, 200);
  t.deepEqual(await refusal('1.8.0'), { code: CloseCode.versionRefused, reason: "client version '1.8.0' is not accepted; required version: 2.1.0" });
});

test.serial('idle_timeout_in_sec between 1 and 7 stops the start', async (t) => {
  await s.stop();
  const err = await t.throwsAsync(startSessionServer({ SessionService: { idle_timeout_in_sec: 5 } }));
  t.is(err.message, '(inline manifest): SessionService.idle_timeout_in_sec must be 0 (off) or at least 8, got 5');
});
