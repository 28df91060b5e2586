/**
 * Prometheus families of the cluster counters (`rpc_stat`, `coordination_stat`), written by
 * `/metrics` when the Cluster component runs. Names follow the rest of `/metrics`: growing
 * values are `_total` counters, times are seconds.
 */
import type { CounterRegistry } from '../counters/registry.ts';
import type { Exposition, Labels } from '../api/main/exposition.ts';
import { Coord, COORD, Rpc, RPC } from './stats.ts';

type Row = [category: string, counter: string, metric: string, type: 'counter' | 'gauge', help: string, labels?: Labels];

const RECORDS = 'Records (messages, requests, invalidations) exchanged with other servers, by direction';
const BATCHES = 'Batches exchanged with other servers through Redis, by direction';
const BYTES = 'Bytes of records exchanged with other servers, by direction';
const DROPPED = 'Messages for other servers that were dropped, by reason';

const ROWS: Row[] = [
  [RPC, Rpc.messagesSent, 'gsf_cluster_records_total', 'counter', RECORDS, { direction: 'sent' }],
  [RPC, Rpc.messagesReceived, 'gsf_cluster_records_total', 'counter', RECORDS, { direction: 'received' }],
  [RPC, Rpc.batchesSent, 'gsf_cluster_batches_total', 'counter', BATCHES, { direction: 'sent' }],
  [RPC, Rpc.batchesReceived, 'gsf_cluster_batches_total', 'counter', BATCHES, { direction: 'received' }],
  [RPC, Rpc.bytesSent, 'gsf_cluster_bytes_total', 'counter', BYTES, { direction: 'sent' }],
  [RPC, Rpc.bytesReceived, 'gsf_cluster_bytes_total', 'counter', BYTES, { direction: 'received' }],
  [RPC, Rpc.queued, 'gsf_cluster_queued_messages', 'gauge', 'Messages for other servers waiting for Redis'],
  [RPC, Rpc.retriedBatches, 'gsf_cluster_retried_batches_total', 'counter', 'Batches sent again after Redis was unreachable'],
  [RPC, Rpc.droppedQueueFull, 'gsf_cluster_dropped_messages_total', 'counter', DROPPED, { reason: 'queue_full' }],
  [RPC, Rpc.droppedUnroutable, 'gsf_cluster_dropped_messages_total', 'counter', DROPPED, { reason: 'no_session' }],
  [RPC, Rpc.droppedFailed, 'gsf_cluster_dropped_messages_total', 'counter', DROPPED, { reason: 'refused' }],
  [RPC, Rpc.duplicateBatches, 'gsf_cluster_duplicate_batches_total', 'counter', 'Batches received twice and applied once'],
  [RPC, Rpc.lostBatches, 'gsf_cluster_lost_batches_total', 'counter', 'Batches other servers sent that never arrived'],
  [RPC, Rpc.sequenceRestarts, 'gsf_cluster_sequence_restarts_total', 'counter', 'Times a server\'s batch sequence started again (Redis lost its data)'],
  [RPC, Rpc.badBatches, 'gsf_cluster_bad_batches_total', 'counter', 'Batches that could not be read'],
  [RPC, Rpc.badRecords, 'gsf_cluster_bad_records_total', 'counter', 'Records skipped because they could not be decoded'],
  [RPC, Rpc.requestsSent, 'gsf_cluster_requests_total', 'counter', 'Requests to other servers, by direction', { direction: 'sent' }],
  [RPC, Rpc.requestsServed, 'gsf_cluster_requests_total', 'counter', 'Requests to other servers, by direction', { direction: 'served' }],
  [RPC, Rpc.requestTimeouts, 'gsf_cluster_request_timeouts_total', 'counter', 'Requests another server did not answer in time'],
  [RPC, Rpc.invokesReceived, 'gsf_cluster_invokes_received_total', 'counter', 'Events queued here by other servers'],
  [RPC, Rpc.flushLatencyMean, 'gsf_cluster_flush_latency_mean_seconds', 'gauge', 'Mean time from a batch flush to its acknowledgement by Redis'],
  [RPC, Rpc.flushLatencyMax, 'gsf_cluster_flush_latency_max_seconds', 'gauge', 'Longest time from a batch flush to its acknowledgement by Redis'],
  [COORD, Coord.connected, 'gsf_cluster_redis_connected', 'gauge', '1 while Redis is reachable'],
  [COORD, Coord.reconnects, 'gsf_cluster_redis_reconnects_total', 'counter', 'Times the connection to Redis came back'],
  [COORD, Coord.dataLosses, 'gsf_cluster_redis_data_losses_total', 'counter', 'Times Redis came back without its data'],
  [COORD, Coord.errors, 'gsf_cluster_redis_errors_total', 'counter', 'Failed Redis commands and connection errors'],
  [COORD, Coord.commands, 'gsf_cluster_redis_commands_total', 'counter', 'Redis commands and scripts run'],
  [COORD, Coord.latencyMean, 'gsf_cluster_redis_command_latency_mean_seconds', 'gauge', 'Mean Redis command latency'],
  [COORD, Coord.latencyMax, 'gsf_cluster_redis_command_latency_max_seconds', 'gauge', 'Longest Redis command'],
  [COORD, Coord.slow, 'gsf_cluster_slow_operations_total', 'counter', 'Redis operations slower than warning_threshold_slow_distribution_in_sec'],
  [COORD, Coord.heartbeats, 'gsf_cluster_heartbeats_total', 'counter', 'Presence heartbeats written'],
  [COORD, Coord.registrations, 'gsf_cluster_registrations_total', 'counter', 'Times this server registered its presence'],
  [COORD, Coord.servers, 'gsf_cluster_servers', 'gauge', 'Live servers in the cluster'],
  [COORD, Coord.sessions, 'gsf_cluster_sessions', 'gauge', 'Sessions on every live server, as of their last heartbeats'],
  [COORD, Coord.accounts, 'gsf_cluster_accounts', 'gauge', 'Accounts logged in on every live server, as of their last heartbeats'],
  [COORD, Coord.sweptServers, 'gsf_cluster_swept_servers_total', 'counter', 'Dead servers whose presence this server removed'],
  [COORD, Coord.logins, 'gsf_cluster_logins_total', 'counter', 'Logins claimed in Redis (all outcomes)'],
  [COORD, Coord.loginsReplaced, 'gsf_cluster_logins_replaced_total', 'counter', 'Logins that replaced a session, here or on another server'],
  [COORD, Coord.loginsRefused, 'gsf_cluster_logins_refused_total', 'counter', "Logins refused by account_login_policy 'refuse'"],
  [COORD, Coord.objectInvalidationsSent, 'gsf_cluster_object_invalidations_total', 'counter', 'Object invalidations, by direction', { direction: 'sent' }],
  [COORD, Coord.objectInvalidationsApplied, 'gsf_cluster_object_invalidations_total', 'counter', 'Object invalidations, by direction', { direction: 'applied' }],
];

const OWN = new Set(ROWS.map(([category, counter]) => `${category}\u0000${counter}`));

/** Whether the counter is one of the cluster's, which these families write. */
export function ownsClusterCounter(category: string, name: string): boolean {
  return OWN.has(`${category}\u0000${name}`);
}

/** Writes the families whose counters exist (only while the Cluster component runs). */
export function writeClusterMetrics(out: Exposition, registry: CounterRegistry): void {
  for (const [category, counter, metric, type, help, labels] of ROWS) {
    const v = registry.read(category, counter);
    if (typeof v !== 'number') continue;
    out.family(metric, type, help);
    out.sample(metric, labels ?? {}, v);
  }
}
