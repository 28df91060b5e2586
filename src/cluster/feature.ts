/**
 * The `Cluster` component as a built-in feature: several gsf servers as one game, on Redis.
 * Listed, it connects to Redis before the session listener starts (the start fails when Redis
 * cannot be reached), joins the listener and the account manager to the cluster, registers
 * the server once its ports are known, and serves `/v1/cluster/…`. Not listed, nothing here
 * runs and no Redis client is loaded; `api.cluster` then answers for this one server.
 */
import { gsfError } from '../errors.ts';
import type { Feature } from '../features.ts';
import { clusterNeedsPostgres, publishedConfig } from '../objects/config.ts';
import { encodeFrame, sessionCodec } from '../session/codec.ts';
import { activeSessions } from '../session/main/feature.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';
import { Cluster } from './cluster.ts';
import { serveClusterCalls, type ClusterOp } from './calls.ts';
import { clusterConfig, defaultServerId } from './config.ts';
import { setClusterChanges, setClusterMetrics, setSessionJoin } from '../hooks/cluster-hooks.ts';
import { ownsClusterCounter, writeClusterMetrics } from './metrics.ts';
import { setMainClusterRunner, type ClusterServer } from './plugin-api.ts';
import { registerClusterRoutes } from './routes.ts';

/** The running cluster of this process (tests and embedders), or null. */
export let activeCluster: Cluster | null = null;

/** `api.cluster` operations, on the main thread. */
function clusterOps(thread: ThreadContext, cluster: Cluster | null): (op: ClusterOp, args: unknown[]) => Promise<unknown> {
  return async (op, args) => {
    switch (op) {
      case 'servers':
        return (cluster?.servers() ?? []).map(({ id, host, pid, api, websocket, sessions, accounts, started }): ClusterServer =>
          ({ id, host, pid, api, websocket, sessions, accounts, started }));
      case 'invoke': {
        const [server, event, payload, options] = args as [string, string, unknown, { tag?: number; name?: string }];
        if (cluster === null || server === cluster.serverId) {
          if (cluster === null) throw gsfError('GSF_ERR_CLUSTER_UNKNOWN_SERVER', server);
          return thread.runtime.invoke(event, payload, options);
        }
        return cluster.rpc.request(server, 'invoke', { event, payload, tag: options.tag, name: options.name });
      }
      case 'sendToAccount': {
        const [account, type, body] = args as [string, string, unknown];
        const sessions = activeSessions;
        if (sessions === null) return false;
        const sessionId = await sessions.accounts.locate(account);
        if (sessionId === null) return false;
        sessions.listener.send(sessionId, encodeFrame(sessionCodec(sessionId), type, body));
        return true;
      }
    }
  };
}

export const clusterFeature: Feature = {
  name: 'cluster',
  async start({ manifest, thread, api, dispatcher }) {
    const ports = new Set<{ close(): void }>();
    const serveWorkers = (run: (op: ClusterOp, args: unknown[]) => Promise<unknown>): void => {
      setMainClusterRunner(run);
      dispatcher.onChannel('cluster', (hello) => {
        ports.add(hello.port);
        // Closed when the worker's thread ends (a reload or resize): let go of it.
        hello.port.once('close', () => ports.delete(hello.port));
        serveClusterCalls(hello.port, run);
      });
    };
    const stopWorkers = (): void => {
      setMainClusterRunner(null);
      dispatcher.onChannel('cluster', null);
      for (const p of ports) p.close();
    };
    if (!manifest.listed.has('Cluster')) {
      serveWorkers(clusterOps(thread, null));
      return { stop: stopWorkers };
    }

    const cfg = clusterConfig(manifest);
    const store = publishedConfig();
    if (store !== null && store.backend !== 'postgresql') {
      throw clusterNeedsPostgres(manifest.file);
    }
    const cluster = await Cluster.connect(cfg, thread);
    activeCluster = cluster;
    setClusterMetrics({ owns: ownsClusterCounter, write: writeClusterMetrics });
    serveWorkers(clusterOps(thread, cluster));
    const apiArgs = manifest.components.ApiService!;
    const apiAddress = manifest.listed.has('ApiService') ? `${apiArgs.api_service_address as string}:${api.port}` : null;
    let registered = false;
    const register = async (id: string, websocket: string | null): Promise<void> => {
      await cluster.register(id, { api: apiAddress, websocket });
      registered = true;
      setClusterChanges(cluster);
      registerClusterRoutes(api.router, cluster);
      thread.log.info(`Cluster: server ${id} joined cluster '${cfg.prefix.slice(0, -1)}' on Redis (${cluster.servers().length} live server(s))`);
    };
    if (manifest.listed.has('SessionService')) {
      setSessionJoin({
        attach: (listener, accounts, policy) => cluster.attachSessions(listener, accounts, policy),
        listening: (address, port) => register(cfg.serverId || defaultServerId(port), `${address}:${port}`),
      });
    } else {
      await register(cfg.serverId || defaultServerId(manifest.listed.has('ApiService') ? api.port : process.pid), null);
    }
    const drainMs = Math.min(manifest.components.EventDispatcher!.shutdown_drain_timeout_in_ms as number, 5000);
    return {
      listening: {},
      async stop() {
        setSessionJoin(null);
        setClusterChanges(null);
        setClusterMetrics(null);
        stopWorkers();
        activeCluster = null;
        if (registered) await cluster.leave(drainMs);
        else await cluster.link.close();
      },
      async closeAfterObjects() {
        if (registered) await cluster.close(drainMs);
      },
    };
  },
};
