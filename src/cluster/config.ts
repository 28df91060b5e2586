/**
 * The `Cluster` component's settings (main thread), read from the manifest and checked where a
 * bad combination would only show later (a TTL shorter than the heartbeat, a SQLite object store).
 */
import os from 'node:os';
import { ManifestError, type Manifest } from '../config/manifest.ts';

export interface ClusterConfig {
  redisUrl: string;
  /** The configured id, or '' to take host:port once the listeners are up. */
  serverId: string;
  /** Prefix of every Redis key (`<cluster_name>:`). */
  prefix: string;
  heartbeatMs: number;
  ttlMs: number;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  maxQueued: number;
  streamMaxLength: number;
  /** `CounterService.warning_threshold_slow_distribution_in_sec` (SPEC 8), in milliseconds. */
  slowMs: number;
}

/** Characters a server id or cluster name may not hold: they separate fields in Redis values. */
const BAD_ID = /[|\s]/;

/** Reads and checks the component's arguments. */
export function clusterConfig(manifest: Manifest): ClusterConfig {
  const c = manifest.components.Cluster!;
  const where = `${manifest.file}: Cluster`;
  const serverId = c.server_id as string;
  const name = c.cluster_name as string;
  if (BAD_ID.test(serverId)) throw new ManifestError(`${where}.server_id must not contain '|' or white space (got '${serverId}')`);
  if (name === '' || BAD_ID.test(name)) throw new ManifestError(`${where}.cluster_name must be a non-empty name without '|' or white space`);
  const heartbeatMs = c.heartbeat_interval_in_ms as number;
  const ttlMs = c.presence_ttl_in_ms as number;
  if (ttlMs < 2 * heartbeatMs) {
    throw new ManifestError(`${where}.presence_ttl_in_ms (${ttlMs}) must be at least twice heartbeat_interval_in_ms (${heartbeatMs}): one late heartbeat must not end a live server's presence`);
  }
  const url = c.redis_url as string;
  if (!/^rediss?:\/\//.test(url)) throw new ManifestError(`${where}.redis_url must start with redis:// or rediss:// (got '${url}')`);
  return {
    redisUrl: url,
    serverId,
    prefix: `${name}:`,
    heartbeatMs,
    ttlMs,
    requestTimeoutMs: c.request_timeout_in_ms as number,
    connectTimeoutMs: c.connect_timeout_in_ms as number,
    maxQueued: c.max_queued_messages as number,
    streamMaxLength: c.stream_max_length as number,
    slowMs: ((manifest.components.CounterService?.warning_threshold_slow_distribution_in_sec as number | undefined) ?? 3) * 1000,
  };
}

/** The default server id: this host and the port clients (or operators) reach it on. */
export function defaultServerId(port: number): string {
  return `${os.hostname()}:${port}`;
}

/** The URL without its password, for log lines. */
export function shownUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
