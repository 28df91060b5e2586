/**
 * SPEC 2.5's distribution counters, filled by the Cluster component (main thread):
 *   rpc_stat           cross-server traffic: records and batches each way, what waited while
 *                      Redis was away, what was dropped and why, requests to other servers
 *   coordination_stat  the presence store (Redis): connection, commands and their latency,
 *                      logins, live servers and the cluster's sessions and accounts
 * Operations slower than `warning_threshold_slow_distribution_in_sec` (SPEC 8) write
 * `Slow distribution: store=redis, operation=…, time=…s` and count in `slow_operations`.
 */
import { native } from '../native.ts';
import type { Logger } from '../log/logger.ts';
import { counterRegistry } from '../counters/registry.ts';

export const RPC = 'rpc_stat';
export const COORD = 'coordination_stat';

/** `rpc_stat` counters (integers unless named `_in_sec`). */
export const Rpc = {
  messagesSent: 'messages_sent',
  messagesReceived: 'messages_received',
  batchesSent: 'batches_sent',
  batchesReceived: 'batches_received',
  bytesSent: 'bytes_sent',
  bytesReceived: 'bytes_received',
  queued: 'queued_messages',
  retriedBatches: 'retried_batches',
  droppedQueueFull: 'dropped_queue_full',
  droppedUnroutable: 'dropped_unroutable',
  droppedFailed: 'dropped_failed',
  duplicateBatches: 'duplicate_batches',
  lostBatches: 'lost_batches',
  sequenceRestarts: 'sequence_restarts',
  badBatches: 'bad_batches',
  badRecords: 'bad_records',
  requestsSent: 'requests_sent',
  requestsServed: 'requests_served',
  requestTimeouts: 'request_timeouts',
  invokesReceived: 'invokes_received',
  flushLatencyMean: 'flush_latency_mean_in_sec',
  flushLatencyMax: 'flush_latency_max_in_sec',
} as const;

/** `coordination_stat` counters. */
export const Coord = {
  connected: 'connected',
  reconnects: 'reconnects',
  dataLosses: 'data_losses',
  errors: 'errors',
  commands: 'commands',
  latencyMean: 'command_latency_mean_in_sec',
  latencyMax: 'command_latency_max_in_sec',
  slow: 'slow_operations',
  heartbeats: 'heartbeats',
  registrations: 'registrations',
  servers: 'cluster_servers',
  sessions: 'cluster_sessions',
  accounts: 'cluster_accounts',
  sweptServers: 'swept_servers',
  logins: 'logins',
  loginsReplaced: 'logins_replaced',
  loginsRefused: 'logins_refused',
  objectInvalidationsSent: 'object_invalidations_sent',
  objectInvalidationsApplied: 'object_invalidations_applied',
} as const;

const DESCRIPTIONS: Record<string, string> = {
  [`${RPC}/${Rpc.messagesSent}`]: 'Records (messages, requests, invalidations) handed to Redis for other servers',
  [`${RPC}/${Rpc.messagesReceived}`]: 'Records received from other servers',
  [`${RPC}/${Rpc.batchesSent}`]: 'Batches written to Redis (one per flush)',
  [`${RPC}/${Rpc.batchesReceived}`]: "Batches read from this server's stream",
  [`${RPC}/${Rpc.bytesSent}`]: 'Bytes of records handed to Redis',
  [`${RPC}/${Rpc.bytesReceived}`]: 'Bytes of records received',
  [`${RPC}/${Rpc.retriedBatches}`]: 'Batches sent again after Redis was unreachable',
  [`${RPC}/${Rpc.droppedQueueFull}`]: 'Messages dropped because max_queued_messages were already waiting',
  [`${RPC}/${Rpc.droppedUnroutable}`]: 'Messages for a session no live server holds',
  [`${RPC}/${Rpc.droppedFailed}`]: 'Messages dropped because Redis refused their batch',
  [`${RPC}/${Rpc.duplicateBatches}`]: 'Batches received twice (a resend after a lost answer) and applied once',
  [`${RPC}/${Rpc.lostBatches}`]: 'Batches another server sent that never arrived (trimmed, or lost with Redis)',
  [`${RPC}/${Rpc.sequenceRestarts}`]: 'Times a server\'s batch sequence started again (Redis lost its data): batches not yet read then are lost',
  [`${RPC}/${Rpc.badBatches}`]: 'Batches that could not be read',
  [`${RPC}/${Rpc.badRecords}`]: 'Records skipped because they could not be decoded (the rest of their batch was applied)',
  [`${RPC}/${Rpc.requestsSent}`]: 'Requests to other servers (counters, broadcasts, invoke)',
  [`${RPC}/${Rpc.requestsServed}`]: 'Requests of other servers answered here',
  [`${RPC}/${Rpc.requestTimeouts}`]: 'Requests another server did not answer in request_timeout_in_ms',
  [`${RPC}/${Rpc.invokesReceived}`]: 'Events queued here by other servers',
  [`${RPC}/${Rpc.flushLatencyMean}`]: 'Mean time from a batch flush to its acknowledgement by Redis (seconds)',
  [`${RPC}/${Rpc.flushLatencyMax}`]: 'Longest time from a batch flush to its acknowledgement by Redis (seconds)',
  [`${COORD}/${Coord.connected}`]: '1 while Redis is reachable',
  [`${COORD}/${Coord.reconnects}`]: 'Times the connection to Redis came back',
  [`${COORD}/${Coord.dataLosses}`]: 'Times Redis came back without its data (a restart): presence was registered again',
  [`${COORD}/${Coord.errors}`]: 'Failed Redis commands and connection errors',
  [`${COORD}/${Coord.commands}`]: 'Redis commands and scripts run',
  [`${COORD}/${Coord.latencyMean}`]: 'Mean Redis command latency (seconds)',
  [`${COORD}/${Coord.latencyMax}`]: 'Longest Redis command (seconds)',
  [`${COORD}/${Coord.slow}`]: 'Redis operations slower than warning_threshold_slow_distribution_in_sec',
  [`${COORD}/${Coord.heartbeats}`]: 'Presence heartbeats written',
  [`${COORD}/${Coord.registrations}`]: 'Times this server registered its sessions, accounts and groups',
  [`${COORD}/${Coord.servers}`]: 'Live servers in the cluster (this one included)',
  [`${COORD}/${Coord.sessions}`]: 'Sessions on every live server, as of their last heartbeats',
  [`${COORD}/${Coord.accounts}`]: 'Accounts logged in on every live server, as of their last heartbeats',
  [`${COORD}/${Coord.sweptServers}`]: "Dead servers whose presence this server removed",
  [`${COORD}/${Coord.logins}`]: 'Logins claimed in Redis',
  [`${COORD}/${Coord.loginsReplaced}`]: 'Logins that replaced a session (here or on another server)',
  [`${COORD}/${Coord.loginsRefused}`]: "Logins refused by account_login_policy 'refuse'",
  [`${COORD}/${Coord.objectInvalidationsSent}`]: 'Committed objects announced to other servers',
  [`${COORD}/${Coord.objectInvalidationsApplied}`]: 'Cached objects dropped because another server committed a newer version',
};

/** Keeps the counters and their running means. */
export class ClusterStats {
  private commands = 0;
  private commandSec = 0;
  private commandMax = 0;
  private flushes = 0;
  private flushSec = 0;
  private flushMax = 0;

  constructor(private readonly log: Logger, private readonly slowMs: number) {
    for (const [key, description] of Object.entries(DESCRIPTIONS)) {
      const [category, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
      native.counterUpdate(category, name, 0, name.endsWith('_in_sec'), description);
    }
  }

  /** `rpc_stat/queued_messages`, read live (it changes with every message while Redis is away). */
  queued(read: () => number): void {
    counterRegistry.registerCallable(RPC, Rpc.queued, 'Messages for other servers waiting to be handed to Redis', () => read());
  }

  rpc(name: string, amount = 1): void {
    native.counterIncrease(RPC, name, amount);
  }

  coord(name: string, amount = 1): void {
    native.counterIncrease(COORD, name, amount);
  }

  set(category: string, name: string, value: number): void {
    native.counterUpdate(category, name, value, name.endsWith('_in_sec'));
  }

  /** Times one Redis operation; past the threshold it writes the slow-distribution line. */
  command(operation: string, ms: number): void {
    this.commands++;
    this.commandSec += ms / 1000;
    this.commandMax = Math.max(this.commandMax, ms / 1000);
    native.counterIncrease(COORD, Coord.commands, 1);
    native.counterUpdate(COORD, Coord.latencyMean, this.commandSec / this.commands, true);
    native.counterUpdate(COORD, Coord.latencyMax, this.commandMax, true);
    this.slow(operation, ms);
  }

  /** A batch acknowledged by Redis `ms` after its flush. */
  flushed(operation: string, ms: number): void {
    this.flushes++;
    this.flushSec += ms / 1000;
    this.flushMax = Math.max(this.flushMax, ms / 1000);
    native.counterUpdate(RPC, Rpc.flushLatencyMean, this.flushSec / this.flushes, true);
    native.counterUpdate(RPC, Rpc.flushLatencyMax, this.flushMax, true);
    this.slow(operation, ms);
  }

  private slow(operation: string, ms: number): void {
    if (ms <= this.slowMs) return;
    native.counterIncrease(COORD, Coord.slow, 1);
    this.log.warn(`Slow distribution: store=redis, operation=${operation}, time=${(ms / 1000).toFixed(3)}s`);
  }
}
