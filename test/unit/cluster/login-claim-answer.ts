/**
 * A login claim (outbox `K` op) is answered within request_timeout_in_ms also when the batch
 * carrying it is on its way to Redis and Redis does not answer (a stalled host, a connection
 * about to drop): the login rejects with GSF_ERR_CLUSTER_UNAVAILABLE, and a claim Redis makes
 * after all is released. The Redis link is a stand-in whose script calls the test ends itself.
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

// One outbox for the whole file: it registers the process's rpc_stat counters.
test('a login whose batch is in flight is refused at the request timeout; a claim Redis confirms after all is released', async (t) => {
  const timeoutMs = 100;
  const { link, calls } = fakeLink();
  const outbox = new Outbox(link as unknown as RedisLink, config(timeoutMs), new ClusterStats(log, 3000), log);
  outbox.resume('a');
  const login: { settled: { ok: boolean; error?: string } | null } = { settled: null };
  outbox.claim('ada', 4294967297, 'replace').then(
    () => { login.settled = { ok: true }; },
    (err: Error) => { login.settled = { ok: false, error: err.message }; },
  );
  await until('the batch with the claim to be sent', () => calls.length === 1, 2000);
  // Redis does not answer (a stalled host keeps the connection open): the login is refused.
  await until('the login to be answered', () => login.settled !== null, 5000);
  t.deepEqual(login.settled, { ok: false, error: `the cluster is unavailable: the login of 'ada' was not confirmed by Redis within ${timeoutMs} ms` });
  t.is(calls.length, 1, 'refused while its batch is still in flight');
  // Redis ran the claim after all ([unroutable, answers, learned, expiredFor]): it is released.
  calls[0]!.resolve([[], ['ok'], [], []]);
  await until('a release of the claim', () => calls.length === 2, 2000);
  const args = calls[1]!.args.map(String);
  const at = args.indexOf('R');
  t.deepEqual(args.slice(at, at + 3), ['R', 'ada', '4294967297']);
  calls[1]!.resolve([[], [], [], []]);

  // Another refused the same way, whose batch then fails (the connection drops): not sent again.
  const second = outbox.claim('bob', 4294967298, 'replace').then(() => 'confirmed', (err: { code: string }) => err.code);
  await until('the batch with the second claim to be sent', () => calls.length === 3, 2000);
  t.is(await second, 'GSF_ERR_CLUSTER_UNAVAILABLE');
  calls[2]!.reject(new Error('Connection is closed.'));
  await until('the batch to be sent again', () => calls.length === 4, 2000);
  t.false(calls[3]!.args.map(String).includes('bob'), 'the refused claim is not in the batch sent again');
});
