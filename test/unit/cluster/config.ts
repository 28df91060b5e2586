/** The Cluster component's arguments: defaults, checks that name the argument, and the default server id. */
import test from 'ava';
import os from 'node:os';
import { parseManifest } from '../../../src/config/manifest.ts';
import { clusterConfig, defaultServerId, shownUrl } from '../../../src/cluster/config.ts';

const manifest = (args: Record<string, unknown>, extra: unknown[] = []): ReturnType<typeof parseManifest> =>
  parseManifest({ components: [{ name: 'Cluster', arguments: args }, ...extra] }, 'MANIFEST.json', os.tmpdir());

test('defaults: local Redis, prefix gsf:, 1 s heartbeats, 5 s TTL, and the slow-distribution threshold of CounterService', (t) => {
  t.deepEqual(clusterConfig(manifest({})), {
    redisUrl: 'redis://127.0.0.1:6379', serverId: '', prefix: 'gsf:', heartbeatMs: 1000, ttlMs: 5000, requestTimeoutMs: 3000,
    connectTimeoutMs: 5000, maxQueued: 100000, streamMaxLength: 100000, slowMs: 3000,
  });
  const m = manifest({ cluster_name: 'eu', server_id: 'game-7' },
    [{ name: 'ApiService', arguments: {} }, { name: 'CounterService', arguments: { warning_threshold_slow_distribution_in_sec: 1 } }]);
  t.like(clusterConfig(m), { prefix: 'eu:', serverId: 'game-7', slowMs: 1000 });
  t.true(manifest({}).listed.has('Cluster'));
});

test('bad combinations stop the start, naming the argument', (t) => {
  t.throws(() => clusterConfig(manifest({ heartbeat_interval_in_ms: 1000, presence_ttl_in_ms: 1500 })), {
    message: 'MANIFEST.json: Cluster.presence_ttl_in_ms (1500) must be at least twice heartbeat_interval_in_ms (1000): one late heartbeat must not end a live server\'s presence',
  });
  t.throws(() => clusterConfig(manifest({ server_id: 'a|b' })), { message: "MANIFEST.json: Cluster.server_id must not contain '|' or white space (got 'a|b')" });
  t.throws(() => clusterConfig(manifest({ cluster_name: '' })), { message: "MANIFEST.json: Cluster.cluster_name must be a non-empty name without '|' or white space" });
  t.throws(() => clusterConfig(manifest({ redis_url: 'localhost:6379' })), { message: "MANIFEST.json: Cluster.redis_url must start with redis:// or rediss:// (got 'localhost:6379')" });
  t.throws(() => manifest({ heartbeat_interval_in_ms: 10 }), { message: 'MANIFEST.json: Cluster.heartbeat_interval_in_ms must be an integer >= 50' });
  t.throws(() => manifest({ redis: 'x' }), { message: /^MANIFEST\.json: Cluster\.redis is not an argument of Cluster \(known: redis_url, server_id, / });
});

test('the default id is host:port; passwords stay out of log lines', (t) => {
  t.is(defaultServerId(8012), `${os.hostname()}:8012`);
  t.is(shownUrl('redis://user:secret@cache:6379/2'), 'redis://user:***@cache:6379/2');
  t.is(shownUrl('redis://:secret@cache:6379'), 'redis://:***@cache:6379');
  t.is(shownUrl('redis://cache:6379'), 'redis://cache:6379');
});
