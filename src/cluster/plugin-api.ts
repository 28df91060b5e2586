/**
 * `api.cluster`: which server this is, the live servers, events invoked on a named server and
 * messages to an account wherever it is logged in. On event workers the calls go to the main
 * thread (`calls.ts`); without the Cluster component there is one server, this one.
 */
import { gsfError } from '../errors.ts';
import type { EventRuntime } from '../events/runtime.ts';
import type { InvokeOptions } from '../events/types.ts';
import { clusterCall, type ClusterOp } from './calls.ts';

/** A live server, as it told the cluster at its last heartbeat. */
export interface ClusterServer {
  id: string;
  host: string;
  pid: number;
  /** Its API-service address (`host:port`), or null. */
  api: string | null;
  /** Its client WebSocket address, or null. */
  websocket: string | null;
  sessions: number;
  accounts: number;
  /** When it started (ISO 8601). */
  started: string;
}

export interface ClusterApi {
  /** This server's id in the cluster; null without the Cluster component. */
  readonly serverId: string | null;
  /** The live servers (this one included); empty without the Cluster component. */
  servers(): Promise<ClusterServer[]>;
  /**
   * Queues `event` on server `serverId` (a random tag there unless `options.tag`, SPEC 6.2.4c)
   * and resolves with its event id there. Rejects when no live server has that id, when the
   * event is unknown there, or when the server does not answer in `request_timeout_in_ms`.
   */
  invoke(serverId: string, event: string, payload?: unknown, options?: InvokeOptions): Promise<number>;
  /**
   * Sends a message to the session an account is logged in on, on any server; false when the
   * account is not logged in. For several messages in order, locate the session once
   * (`api.accounts.locate`) and use `api.sessions.send`.
   */
  sendToAccount(accountId: string, type: string, body?: unknown): Promise<boolean>;
}

let mainRunner: ((op: ClusterOp, args: unknown[]) => Promise<unknown>) | null = null;

/** Set by the cluster feature on the main thread. */
export function setMainClusterRunner(run: ((op: ClusterOp, args: unknown[]) => Promise<unknown>) | null): void {
  mainRunner = run;
}

function nonEmpty(what: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw gsfError('GSF_ERR_BAD_ARGUMENT', `cluster.${what} must be a non-empty string`);
  return value;
}

export function createClusterApi(rt: EventRuntime): ClusterApi {
  const call = (op: ClusterOp, args: unknown[]): Promise<unknown> => {
    if (rt.role !== 'main') return clusterCall(op, args);
    if (mainRunner === null) return Promise.reject(gsfError('GSF_ERR_NOT_ON_WORKER', `cluster.${op} before the server started`));
    return mainRunner(op, args);
  };
  return {
    get serverId() {
      const id = rt.flags.get<string>('cluster_server_id');
      return id === '' ? null : id;
    },
    servers: () => call('servers', []) as Promise<ClusterServer[]>,
    invoke(serverId, event, payload, options) {
      const args = [nonEmpty('invoke: server id', serverId), nonEmpty('invoke: event', event), payload ?? null, { tag: options?.tag, name: options?.name }];
      return call('invoke', args) as Promise<number>;
    },
    sendToAccount(accountId, type, body) {
      return call('sendToAccount', [nonEmpty('sendToAccount: account id', accountId), nonEmpty('sendToAccount: type', type), body ?? null]) as Promise<boolean>;
    },
  };
}
