/**
 * A login claim (outbox `K` op) is answered within request_timeout_in_ms also when the batch
 * carrying it was already on its way to Redis and then failed because the connection went
 * away: the login rejects with GSF_ERR_CLUSTER_UNAVAILABLE instead of waiting for Redis to
 * come back. The Redis link is a stand-in whose script call the test ends itself.
 */
import test from 'ava';
import { Outbox } from '../../../src/cluster/outbox.ts';
import { ClusterStats } from '../../../src/cluster/stats.ts';
import { gsfError } from '../../../src/errors.ts';
import type { ClusterConfig } from '../../../src/cluster/config.ts';
import type { Logger } from '../../../src/log/logger.ts';
import type { RedisLink } from '../../../src/cluster/redis-link.ts';

const log = { info() {}, warn() {}, error() {}, vlog() {}, debug() {} } as unknown as Logger;

function config(requestTimeoutMs: number): ClusterConfig {
  return {
    redisUrl: 'redis://127.0.0.1:1', serverId: 'a', prefix: 'gsf:', heartbeatMs: 50, ttlMs: 200,
    requestTimeoutMs, connectTimeoutMs: 100, maxQueued: 1000, streamMaxLength: 100, slowMs: 3000,
  };
}

/** A link whose script calls wait until the test settles them. */
function fakeLink() {
  const calls: Array<{ args: Array<string | Buffer | number>; reject(err: Error): void; resolve(v: unknown): void }> = [];
  const link = {
    up: true,
    script(_name: string, _op: string, args: Array<string | Buffer | number>): Promise<unknown> {
      return new Promise((resolve, reject) => calls.push({ args, resolve, reject }));
    },
    unavailable: () => gsfError('GSF_ERR_CLUSTER_UNAVAILABLE', 'Redis at redis://127.0.0.1:1 is unreachable'),
  };
  return { link, calls };
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a login whose batch was in flight when Redis went away is answered within the request timeout', async (t) => {
  const timeoutMs = 100;
  const { link, calls } = fakeLink();
  const outbox = new Outbox(link as unknown as RedisLink, config(timeoutMs), new ClusterStats(log, 3000), log);
  outbox.resume('a');
  const started = Date.now();
  const login: { settled: { ok: boolean; error?: string } | null } = { settled: null };
  outbox.claim('ada', 4294967297, 'replace').then(
    () => { login.settled = { ok: true }; },
    (err: Error) => { login.settled = { ok: false, error: err.message }; },
  );
  await until('the batch with the claim to be sent', () => calls.length === 1, 2000);
  // Redis answers later than the request timeout (the batch is in flight all that time)...
  await until('the request timeout to pass', () => Date.now() - started > timeoutMs * 2, 5000);
  t.is(login.settled, null, 'no answer while the batch is in flight');
  // ...and then the connection drops: the call fails with a connection error, Redis stays away.
  link.up = false;
  calls[0]!.reject(new Error('Connection is closed.'));
  await until('the login to be answered', () => login.settled !== null, 5000);
  t.deepEqual(login.settled, { ok: false, error: `the cluster is unavailable: the login of 'ada' was not confirmed by Redis within ${timeoutMs} ms` });
});
