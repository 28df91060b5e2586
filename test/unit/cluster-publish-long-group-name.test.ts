/**
 * A publish to a group whose name is longer than the publish record's u16 name field
 * (65,535 bytes) leaves the outbox as it was: the messages queued after it reach Redis as
 * readable records, and rpc_stat/queued_messages (the outbox's `waiting`) returns to 0 once
 * Redis has acknowledged the batch. The Redis link is a stand-in that answers every flush.
 */
import test from 'ava';
import { Outbox } from '../../src/cluster/outbox.ts';
import { ClusterStats } from '../../src/cluster/stats.ts';
import { applyRecords, type RecordSink } from '../../src/cluster/records.ts';
import { gsfError } from '../../src/errors.ts';
import type { ClusterConfig } from '../../src/cluster/config.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { RedisLink } from '../../src/cluster/redis-link.ts';

const log = { info() {}, warn() {}, error() {}, vlog() {}, debug() {} } as unknown as Logger;

const cfg: ClusterConfig = {
  redisUrl: 'redis://127.0.0.1:1', serverId: 'a', prefix: 'gsf:', heartbeatMs: 50, ttlMs: 200,
  requestTimeoutMs: 1000, connectTimeoutMs: 100, maxQueued: 1000, streamMaxLength: 100, slowMs: 3000,
};

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a publish to a group name past 65,535 bytes does not corrupt the next record or the queued count', async (t) => {
  const batches: Array<Array<string | Buffer | number>> = [];
  const link = {
    up: true,
    async script(_name: string, _op: string, args: Array<string | Buffer | number>): Promise<unknown> {
      batches.push(args);
      return [[], [], [], []]; // every op routed, no answers, nothing learned
    },
    unavailable: () => gsfError('GSF_ERR_CLUSTER_UNAVAILABLE', 'unreachable'),
  };
  const outbox = new Outbox(link as unknown as RedisLink, cfg, new ClusterStats(log, 3000), log);
  outbox.resume('a');
  const group = 'g'.repeat(70_000);
  const frame = Buffer.from('{"type":"hello"}');
  outbox.publish(group, frame, frame); // refused and counted as dropped: nothing is written
  outbox.send(4294967297, '{"type":"after"}');
  await until('the batch to reach the stand-in Redis', () => batches.length > 0, 2000);
  // The op triples start after 5 header arguments: kind, key, payload.
  const args = batches[0]!;
  const ops: Array<{ kind: string; key: string; payload: Buffer }> = [];
  for (let i = 5; i + 2 < args.length; i += 3) ops.push({ kind: String(args[i]), key: String(args[i + 1]), payload: args[i + 2] as Buffer });
  const send = ops.find((o) => o.kind === 'S');
  t.truthy(send, 'the send went out');
  const seen: string[] = [];
  const sink: RecordSink = {
    send: (id, frames) => frames.forEach((f) => seen.push(`send ${id} ${Buffer.from(f).toString()}`)),
    publish: (g) => seen.push(`publish ${g.length}`), broadcast: () => seen.push('broadcast'), close: () => seen.push('close'),
    group: () => seen.push('group'), replaced: () => seen.push('replaced'), control: () => seen.push('control'),
  };
  let error = '';
  try {
    applyRecords(send!.payload, sink, () => undefined);
  } catch (err) {
    error = (err as Error).message;
  }
  await until('queued messages to return to 0', () => outbox.waiting === 0, 5000);
  // waiting: rpc_stat/queued_messages, which counts nothing once the batch is acknowledged.
  t.deepEqual({ error, seen, waiting: outbox.waiting }, { error: '', seen: ['send 4294967297 {"type":"after"}'], waiting: 0 });
});
