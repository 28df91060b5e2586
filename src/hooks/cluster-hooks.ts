/**
 * What the rest of gsf asks of the Cluster component without importing it: the server label
 * and the cluster's families of `/metrics`, and cluster-wide maintenance and configuration
 * changes (`?cluster=true` on their REST routes). Everything here answers "no cluster" while the
 * component is not running.
 */
import { gsfError } from '../errors.ts';
import type { Exposition } from '../api/main/exposition.ts';
import type { CounterRegistry } from '../counters/registry.ts';
import type { MaintenanceRecord, MaintenanceState } from '../maintenance/state.ts';
import type { LocalSessions } from '../session/main/local-sessions.ts';
import type { AccountManager } from '../session/main/accounts.ts';

/** The outcome of a change sent to the other servers: who applied it, who did not and why. */
export interface ClusterOutcome {
  applied: string[];
  failed: Record<string, string>;
}

/** Cluster-wide changes the REST routes ask for. */
export interface ClusterChanges {
  /** This server's id (the `server` label of `/metrics`). */
  readonly serverId: string;
  /** Throws GSF_ERR_CLUSTER_UNAVAILABLE while Redis is unreachable. */
  assertAvailable(): void;
  maintenance(record: MaintenanceRecord, underMaintenance: boolean | undefined, state: MaintenanceState): Promise<ClusterOutcome>;
  flag(name: string, text: string): Promise<ClusterOutcome>;
  compatibleVersions(list: string[]): Promise<ClusterOutcome>;
}

let active: ClusterChanges | null = null;

/** Set by the Cluster component while it runs. */
export function setClusterChanges(changes: ClusterChanges | null): void {
  active = changes;
}

/** The `server` label value of `/metrics`, or null without the Cluster component. */
export function clusterServerLabel(): string | null {
  return active?.serverId ?? null;
}

/** The cluster's own families of `/metrics`. */
export interface ClusterMetrics {
  /**
   * Whether these families write the counter (a cluster counter); the generic families write
   * every other one, a plugin's counter in a cluster category included.
   */
  owns(category: string, name: string): boolean;
  write(out: Exposition, registry: CounterRegistry): void;
}

let metrics: ClusterMetrics | null = null;

/** Set by the Cluster component while it runs. */
export function setClusterMetrics(m: ClusterMetrics | null): void {
  metrics = m;
}

/** The cluster's families of `/metrics`, or null without the Cluster component. */
export function clusterMetrics(): ClusterMetrics | null {
  return metrics;
}

/**
 * Whether a REST request asks for its change on every server: `value` is its `?cluster=`
 * (router.ts `queryParam`; null when absent). Asking without
 * the component is a 409, while Redis is away a 503, and a value other than true/false a 400;
 * in each case before anything changed.
 */
export function clusterRequested(value: string | null): ClusterChanges | null {
  if (value === null || value === 'false' || value === '0') return null;
  if (value !== 'true' && value !== '1') throw gsfError('GSF_ERR_BAD_REQUEST', `cluster must be true or false (got '${value}')`);
  if (active === null) throw gsfError('GSF_ERR_CLUSTER_OFF');
  active.assertAvailable();
  return active;
}

/** Maintenance state the Cluster component applies when another server broadcasts a change. */
export interface MaintenanceTarget {
  update(record: MaintenanceRecord, underMaintenance?: boolean): MaintenanceState;
  snapshot(): MaintenanceState;
}

let maintenanceTarget: MaintenanceTarget | null = null;

/** Set by the maintenance REST group: the state a broadcast from another server changes. */
export function setMaintenanceTarget(target: MaintenanceTarget | null): void {
  maintenanceTarget = target;
}

export function currentMaintenanceTarget(): MaintenanceTarget | null {
  return maintenanceTarget;
}

/** How the session feature joins its listener and account manager to the cluster. */
export interface SessionJoin {
  /** Hooks the listener and the account manager up; called before the listener accepts clients. */
  attach(listener: LocalSessions, accounts: AccountManager, policy: string): void;
  /** The listener listens: the server registers (a default id takes this port). */
  listening(address: string, port: number): Promise<void>;
}

let sessionJoin: SessionJoin | null = null;

/** Set by the Cluster component (started before the session feature) while it runs. */
export function setSessionJoin(join: SessionJoin | null): void {
  sessionJoin = join;
}

export function clusterSessionJoin(): SessionJoin | null {
  return sessionJoin;
}
