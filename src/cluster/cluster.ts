/**
 * One server's membership of a cluster (main thread): the Redis link, the outbox and inbox,
 * presence, requests between servers and object-cache invalidations, wired to this server's
 * sessions and accounts. `feature.ts` starts it; `sessions.ts` and `directory.ts` are how the
 * session listener and the account manager reach it.
 */
import { randomUUID } from 'node:crypto';
import { describeError } from '../errors.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';
import { counterRegistry } from '../counters/registry.ts';
import { invalidText, setText } from '../config/flags.ts';
import type { AccountManager } from '../session/main/accounts.ts';
import type { LocalSessions } from '../session/main/local-sessions.ts';
import type { MaintenanceRecord, MaintenanceState } from '../maintenance/state.ts';
import { readCounterPath } from './aggregate.ts';
import type { ClusterConfig } from './config.ts';
import { currentMaintenanceTarget, type ClusterChanges, type ClusterOutcome } from '../hooks/cluster-hooks.ts';
import { Inbox } from './inbox.ts';
import { ObjectSync } from './objects.ts';
import { Outbox } from './outbox.ts';
import { Presence, type LocalState } from './presence.ts';
import type { ControlMessage, RecordSink } from './records.ts';
import { RedisLink } from './redis-link.ts';
import { RpcClient, type FanOut } from './rpc.ts';
import { Rpc, ClusterStats } from './stats.ts';
import { RemoteSessionsOf } from './sessions.ts';
import { ClusterDirectory } from './directory.ts';

/** A maintenance change broadcast to the cluster (also kept in Redis for servers that start later). */
interface MaintenanceChange {
  record: MaintenanceRecord;
  under_maintenance?: boolean;
}

export class Cluster implements ClusterChanges {
  readonly stats: ClusterStats;
  readonly outbox: Outbox;
  readonly inbox: Inbox;
  readonly objects: ObjectSync;
  private presence: Presence | null = null;
  private rpcClient: RpcClient | null = null;
  private listener: LocalSessions | null = null;
  private accounts: AccountManager | null = null;
  private id = '';
  private readonly instance = randomUUID();
  /** Servers live when Redis lost its data: after registering again, batches wait for them to register too. */
  private regrouping: Promise<void> | null = null;

  /** `rpc_message_logging_level`, read live. */
  private messageLogLevel = 0;

  private constructor(readonly cfg: ClusterConfig, readonly thread: ThreadContext, readonly link: RedisLink, stats: ClusterStats) {
    this.stats = stats;
    this.outbox = new Outbox(link, cfg, stats, thread.log);
    this.inbox = new Inbox(link, cfg, stats, thread.log, this.sink());
    this.objects = new ObjectSync(this.outbox, stats);
    const level = (v: number): void => {
      this.messageLogLevel = v;
      this.outbox.messageLogLevel = v;
      this.inbox.messageLogLevel = v;
    };
    level(thread.flags.get<number>('rpc_message_logging_level'));
    thread.flags.onChange('rpc_message_logging_level', (_n, v) => level(v as number));
  }

  /** Connects to Redis (the start fails when it cannot). */
  static async connect(cfg: ClusterConfig, thread: ThreadContext): Promise<Cluster> {
    const stats = new ClusterStats(thread.log, cfg.slowMs);
    const link = await RedisLink.open(cfg, thread.log, stats);
    return new Cluster(cfg, thread, link, stats);
  }

  /** This server's id (empty until it registered). */
  get serverId(): string {
    return this.id;
  }

  get rpc(): RpcClient {
    return this.rpcClient!;
  }

  /** Hooks the session listener and account manager up (before the listener accepts clients). */
  attachSessions(listener: LocalSessions, accounts: AccountManager, policy: string): void {
    this.listener = listener;
    this.accounts = accounts;
    listener.remote = new RemoteSessionsOf(this.outbox);
    accounts.directory = new ClusterDirectory(this, policy);
  }

  /** Registers this server as `id` and starts heartbeats, the inbox and the outbox. */
  async register(id: string, addresses: { api: string | null; websocket: string | null }): Promise<void> {
    this.id = id;
    this.rpcClient = new RpcClient(id, this.outbox, this.link, this.cfg.requestTimeoutMs, this.stats, this.thread.log);
    this.serveRequests(this.rpcClient);
    this.presence = new Presence(this.link, this.cfg, this.stats, this.thread.log, id, this.instance, addresses, this.localState());
    this.presence.onLive = (ids) => {
      for (const server of ids) this.outbox.serverBack(server);
    };
    // Object announcements go to live servers only: one missed while away leaves a stale copy.
    this.presence.onExpired = () => this.objects.forgetAll();
    // Its id is another process's now: nothing more is read or sent under it.
    this.presence.onTakenOver = () => {
      this.inbox.stop();
      this.outbox.pause();
      this.objects.forgetAll();
    };
    await this.presence.register(true);
    this.thread.flags.set('cluster_server_id', id);
    this.inbox.start(id);
    this.outbox.resume(id);
    this.objects.start();
    this.presence.start();
    this.link.onDown(() => this.outbox.pause());
    this.link.onReady((lostData) => void this.reconnected(lostData));
    await this.adoptMaintenance();
  }

  private localState(): LocalState {
    return {
      sessions: () => this.listener?.sessionIds() ?? [],
      groups: () => this.listener?.groupNames() ?? [],
      accounts: () => this.accounts?.bindings() ?? [],
      lostAccount: (account, sessionId) => {
        if (this.accounts?.replacedElsewhere(account, sessionId)) {
          this.thread.log.info(`Cluster: account '${account}' logged in on another server while this one was away; session ${sessionId} closed (4009)`);
        }
      },
    };
  }

  /** Redis is back. Presence is registered again when Redis lost it, before any batch goes out. */
  private async reconnected(lostData: boolean): Promise<void> {
    this.objects.forgetAll();
    // Its id was taken over: it left the cluster, and stays out.
    if (this.presence?.left === true) return;
    if (!lostData) {
      this.outbox.resume(this.id);
      void this.presence?.beat();
      return;
    }
    const before = this.presence?.liveServers().map((s) => s.id).filter((s) => s !== this.id) ?? [];
    this.regrouping ??= (async () => {
      try {
        this.inbox.restarted();
        await this.presence!.register(false);
        await this.waitForServers(before);
      } catch (err) {
        this.thread.log.warn(`Cluster: registering again failed: ${describeError(err)}`);
      } finally {
        this.regrouping = null;
        this.outbox.resume(this.id);
      }
    })();
    await this.regrouping;
  }

  /** Waits (up to the presence TTL) until the servers live before have registered again. */
  private async waitForServers(ids: readonly string[]): Promise<void> {
    const deadline = Date.now() + this.cfg.ttlMs;
    let missing = [...ids];
    while (missing.length > 0 && Date.now() < deadline && this.link.up) {
      const exists = await Promise.all(missing.map((s) => this.link.command('presence check', (r) => r.exists(`${this.cfg.prefix}srv:${s}`))));
      missing = missing.filter((_, i) => exists[i] === 0);
      if (missing.length > 0) await new Promise((r) => setTimeout(r, 50));
    }
    if (missing.length > 0) this.thread.log.warn(`Cluster: server(s) ${missing.join(', ')} did not register again within ${this.cfg.ttlMs} ms; sending anyway`);
  }

  private sink(): RecordSink {
    return {
      send: (sessionId, frames) => {
        if (this.listener?.deliver(sessionId, frames) !== false) return;
        // The session closed after the sender last found it here (a sender that sent to it before
        // writes to this server without a lookup): dropped as a message for a session no live
        // server holds, as the sender counts one it looked up (the listener counted the engine's).
        this.stats.rpc(Rpc.droppedUnroutable, frames.length);
        if (this.messageLogLevel > 0) this.thread.log.info(`rpc message dropped: session=${sessionId} closed on this server (${frames.length} message(s))`);
      },
      publish: (group, json, msgpack) => this.listener?.publishLocal(group, json, msgpack),
      broadcast: (json, msgpack) => this.listener?.sendAll((codec) => (codec === 'json' ? json : msgpack)),
      close: (sessionId, code, reason) => {
        this.listener?.end(sessionId, code, reason);
      },
      group: (sessionId, group, join) => {
        this.listener?.groupLocal(sessionId, group, join);
      },
      replaced: (sessionId, account) => {
        this.accounts?.replacedElsewhere(account, sessionId);
      },
      control: (message: ControlMessage) => {
        if (message.op === 'inv') this.objects.apply(message.items);
        else this.rpcClient?.receive(message);
      },
    };
  }

  private serveRequests(rpc: RpcClient): void {
    const { flags, runtime } = this.thread;
    rpc.handle('counter', (args) => readCounterPath(counterRegistry, (args as { path: string }).path));
    rpc.handle('maintenance', (args) => {
      const target = currentMaintenanceTarget();
      if (target === null) throw new Error('no maintenance state on this server');
      const a = args as MaintenanceChange;
      return target.update(a.record, a.under_maintenance);
    });
    rpc.handle('flag', (args) => {
      const { name, text } = args as { name: string; text: string };
      const result = flags.setFromText(name, text);
      if (!result.ok) throw new Error(result.reason === 'invalid' ? invalidText(name, text, result.problem) : `'${name}' is not a configurable flag here`);
      return setText(name, result.value);
    });
    rpc.handle('versions', (args) => {
      flags.set('client_compatible_versions', (args as { list: string[] }).list);
      return flags.get('client_compatible_versions');
    });
    rpc.handle('invoke', (args) => {
      const a = args as { event: string; payload: unknown; tag?: number; name?: string };
      this.stats.rpc(Rpc.invokesReceived);
      return runtime.invoke(a.event, a.payload, { tag: a.tag, name: a.name });
    });
    rpc.handle('logout', (args) => {
      const account = (args as { account: string }).account;
      return this.accounts !== null && this.accounts.bindings().some(([a]) => a === account) ? this.accounts.logout(account) : false;
    });
  }

  /** A server that starts after a maintenance broadcast takes the cluster's state. */
  private async adoptMaintenance(): Promise<void> {
    const target = currentMaintenanceTarget();
    if (target === null) return;
    try {
      const text = await this.link.command('maintenance read', (r) => r.get(`${this.cfg.prefix}maintenance`));
      if (text === null) return;
      const change = JSON.parse(text) as MaintenanceChange;
      const state = target.update(change.record, change.under_maintenance);
      this.thread.log.info(`Cluster: took the cluster's maintenance state (${state.under_maintenance ? 'on' : 'off'}, ${state.date_start} to ${state.date_end})`);
    } catch (err) {
      this.thread.log.warn(`Cluster: could not read the cluster's maintenance state: ${describeError(err)}`);
    }
  }

  // ---- ClusterChanges (REST with ?cluster=true) ---------------------------------------

  assertAvailable(): void {
    if (!this.link.up) throw this.link.unavailable();
  }

  /** The other live servers. */
  others(): string[] {
    return (this.presence?.liveServers() ?? []).map((s) => s.id).filter((id) => id !== this.id).sort();
  }

  /** Live servers with what they last told about themselves. */
  servers(): ReturnType<Presence['liveServers']> {
    return this.presence?.liveServers() ?? [];
  }

  private outcome(fan: FanOut): ClusterOutcome {
    return { applied: [this.id, ...Object.keys(fan.answers)].sort(), failed: fan.failed };
  }

  async maintenance(record: MaintenanceRecord, underMaintenance: boolean | undefined, _state: MaintenanceState): Promise<ClusterOutcome> {
    const change: MaintenanceChange = { record, under_maintenance: underMaintenance };
    await this.link.command('maintenance write', (r) => r.set(`${this.cfg.prefix}maintenance`, JSON.stringify(change)));
    const outcome = this.outcome(await this.rpc.requestAll(this.others(), 'maintenance', change));
    this.logOutcome('maintenance change', outcome);
    return outcome;
  }

  async flag(name: string, text: string): Promise<ClusterOutcome> {
    const outcome = this.outcome(await this.rpc.requestAll(this.others(), 'flag', { name, text }));
    this.logOutcome(`flag ${name}=${text}`, outcome);
    return outcome;
  }

  async compatibleVersions(list: string[]): Promise<ClusterOutcome> {
    const outcome = this.outcome(await this.rpc.requestAll(this.others(), 'versions', { list }));
    this.logOutcome('compatible client versions', outcome);
    return outcome;
  }

  private logOutcome(what: string, outcome: ClusterOutcome): void {
    const failed = Object.entries(outcome.failed);
    if (failed.length === 0) this.thread.log.info(`Cluster: ${what} applied on ${outcome.applied.length} server(s)`);
    else this.thread.log.warn(`Cluster: ${what} applied on ${outcome.applied.join(', ')}; not on ${failed.map(([s, why]) => `${s} (${why})`).join(', ')}`);
  }

  // ---- lookups --------------------------------------------------------------------

  locate(account: string): Promise<{ server: string; sessionId: number } | null> {
    return this.presence!.locate(account);
  }

  sessionOwner(sessionId: number): Promise<{ server: string; account: string | null } | null> {
    return this.presence!.session(sessionId);
  }

  /**
   * Leaves the cluster: what is queued goes out, then presence, the inbox and calls end. Commits
   * are still announced (those of the stop's drain too) until `close`.
   */
  async leave(drainMs: number): Promise<void> {
    await this.outbox.drain(drainMs, false);
    await this.presence?.stop();
    this.inbox.stop();
    this.rpcClient?.close();
  }

  /** After the last commit: its announcement goes out, then the link closes. */
  async close(drainMs: number): Promise<void> {
    this.objects.stop();
    await this.outbox.drain(drainMs);
    await this.link.close();
    this.thread.flags.set('cluster_server_id', '');
  }

  /** Stops: lets queued batches reach Redis (bounded), removes this server's presence, closes the link. */
  async stop(drainMs: number): Promise<void> {
    await this.leave(drainMs);
    await this.close(drainMs);
  }
}
