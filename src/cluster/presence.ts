/**
 * This server's presence in Redis (main thread): registration at start, a heartbeat every
 * `heartbeat_interval_in_ms` that renews it for `presence_ttl_in_ms`, and registering again,
 * with every session, group and login it holds, whenever Redis lost it (a restart without data,
 * or an absence longer than the TTL). Heartbeats also bring the list of live servers, and the
 * presence of servers that stopped heartbeating is removed by whichever server sees it first.
 */
import os from 'node:os';
import { gsfError, describeError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import type { ClusterConfig } from './config.ts';
import type { RedisLink } from './redis-link.ts';
import { COORD, Coord, type ClusterStats } from './stats.ts';

/** What a server tells the others about itself (the value of `srv:<id>`). */
export interface ServerInfo {
  id: string;
  host: string;
  pid: number;
  /** Names this process: a restarted server with the same id has another. */
  instance: string;
  started: string;
  api: string | null;
  websocket: string | null;
  sessions: number;
  accounts: number;
  /** Heartbeats written so far. */
  beat: number;
}

/** What this server holds, for registration. */
export interface LocalState {
  sessions(): number[];
  groups(): string[];
  accounts(): Array<[account: string, sessionId: number]>;
  /** An account this server held was logged in elsewhere while this server was away. */
  lostAccount(account: string, sessionId: number): void;
}

/**
 * How long the stream and sequence numbers of a server whose presence expired are kept for it:
 * a paused server that comes back within this reads what was written for it before it expired.
 */
export const EXPIRED_KEPT_MS = 3_600_000;

export class Presence {
  private timer: NodeJS.Timeout | null = null;
  /** When the heartbeat timer last fired, and the longest gap between two firings since a heartbeat reached Redis. */
  private lastTick = 0;
  private longestGap = 0;
  /** Told the live servers after each heartbeat. */
  onLive: ((ids: Iterable<string>) => void) | null = null;
  /**
   * Told when this server's presence expired or must have (it did not run for longer than the
   * TTL): while it was not live, what other servers announced to every server missed it.
   */
  onExpired: (() => void) | null = null;
  /**
   * Told when another process holds this server's id (it took the id over while this one was
   * paused past its TTL): this process has left the cluster, and presence is no longer its own.
   */
  onTakenOver: (() => void) | null = null;
  private takenOver = false;

  /** Whether another process holds this server's id now (see onTakenOver). */
  get left(): boolean {
    return this.takenOver;
  }
  private beating = false;
  private readonly servers = new Map<string, ServerInfo>();
  private readonly info: ServerInfo;
  private registered = false;
  private stopped = false;

  constructor(private readonly link: RedisLink, private readonly cfg: ClusterConfig, private readonly stats: ClusterStats,
    private readonly log: Logger, readonly self: string, instance: string, addresses: { api: string | null; websocket: string | null },
    private readonly local: LocalState) {
    this.info = {
      id: self, host: os.hostname(), pid: process.pid, instance, started: new Date().toISOString(),
      api: addresses.api, websocket: addresses.websocket, sessions: 0, accounts: 0, beat: 0,
    };
  }

  /** Live servers as of the last heartbeat (this one included). */
  liveServers(): ServerInfo[] {
    return [...this.servers.values()];
  }

  isLive(id: string): boolean {
    return this.servers.has(id);
  }

  private infoText(): string {
    const accounts = this.local.accounts();
    this.info.sessions = this.local.sessions().length;
    this.info.accounts = accounts.length;
    return JSON.stringify(this.info);
  }

  /**
   * Registers this server (`fresh`: at start, taking over what a crashed process with the same
   * id left). Another live process with this id makes the start fail; a previous process that
   * died is waited out, up to its remaining TTL.
   */
  async register(fresh: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const sessions = this.local.sessions().map(String);
      const groups = this.local.groups();
      const accounts = this.local.accounts();
      const args: Array<string | number> = [this.cfg.prefix, this.self, this.infoText(), this.cfg.ttlMs, this.info.instance, fresh ? '1' : '0',
        sessions.length, ...sessions, groups.length, ...groups, accounts.length, ...accounts.flatMap(([a, s]) => [a, String(s)])];
      // 'ok': accounts held elsewhere now, and 1 when a sweep had removed this server; 'in_use': the other's info and PTTL.
      const [status, detail, third] = await this.link.script('gsfRegister', `registration of ${sessions.length} session(s)`, args) as [string, unknown, number];
      if (status === 'in_use' && !fresh) {
        // Registering again (after the presence expired): the id is another process's now.
        this.leaveTakenOver(String(detail));
        return;
      }
      if (status === 'ok') {
        const lost = detail as string[];
        if (third === 1) this.log.info(`Cluster: another server had removed this server's presence; its stream was kept, and reading goes on where it left off`);
        for (let i = 0; i + 1 < lost.length; i += 2) this.local.lostAccount(lost[i]!, Number(lost[i + 1]));
        break;
      }
      // Another process has this id. A crashed one stops heartbeating: its presence expires.
      const other = JSON.parse(String(detail)) as ServerInfo;
      if (attempt > 0 && other.beat !== this.lastSeenBeat) {
        throw gsfError('GSF_ERR_CLUSTER_START', `server id '${this.self}' is used by a live server (pid ${other.pid} on ${other.host}, ` +
          `started ${other.started}); give each server its own Cluster.server_id`);
      }
      if (attempt === 0) {
        this.log.info(`Cluster: server id '${this.self}' was used by pid ${other.pid} on ${other.host}; waiting ${third} ms for its presence to expire`);
      }
      this.lastSeenBeat = other.beat;
      // Looked at again every heartbeat interval (at most a second): a live server shows a new
      // beat within about one of its own, and a presence removed early (the other process
      // stopped) is taken over at once, without waiting out the whole TTL.
      const poll = Math.min(Math.max(this.cfg.heartbeatMs, 50), 1000);
      await new Promise((r) => setTimeout(r, Math.min(Math.max(third, 0) + 50, poll)));
    }
    this.registered = true;
    this.stats.coord(Coord.registrations);
    await this.beat();
  }

  private lastSeenBeat = -1;

  /** Starts the heartbeat timer. */
  start(): void {
    this.lastTick = Date.now();
    this.timer = setInterval(() => {
      // A gap far past the interval means this process did not run (SIGSTOP, a VM paused, swapping).
      const now = Date.now();
      // Past the TTL the presence has expired: what was cached from announcements is dropped
      // now, before this process serves anything, not at the next heartbeat's answer.
      if (now - this.lastTick > this.cfg.ttlMs) this.onExpired?.();
      this.longestGap = Math.max(this.longestGap, now - this.lastTick);
      this.lastTick = now;
      void this.beat();
    }, this.cfg.heartbeatMs);
    this.timer.unref();
  }

  /** One heartbeat; after an absence longer than the TTL this server registers again. */
  async beat(): Promise<void> {
    if (this.beating || this.stopped || !this.registered || !this.link.up) return;
    this.beating = true;
    try {
      this.info.beat++;
      const stalled = this.longestGap;
      const [existed, servers, dead] = await this.link.script('gsfHeartbeat', 'heartbeat',
        [this.cfg.prefix, this.self, this.infoText(), this.cfg.ttlMs, this.info.instance]) as [number, string[], string[]];
      if (existed === -1) {
        this.leaveTakenOver(servers as unknown as string);
        return;
      }
      this.longestGap = 0;
      this.stats.coord(Coord.heartbeats);
      this.servers.clear();
      let sessions = 0, accounts = 0;
      for (let i = 0; i + 1 < servers.length; i += 2) {
        try {
          const info = JSON.parse(servers[i + 1]!) as ServerInfo;
          this.servers.set(servers[i]!, info);
          sessions += info.sessions;
          accounts += info.accounts;
        } catch {
          this.log.warn(`Cluster: server ${servers[i]} has unreadable presence info`);
        }
      }
      this.stats.set(COORD, Coord.servers, this.servers.size);
      this.stats.set(COORD, Coord.sessions, sessions);
      this.stats.set(COORD, Coord.accounts, accounts);
      this.onLive?.(this.servers.keys());
      if (existed === 0) {
        this.onExpired?.();
        if (stalled > this.cfg.ttlMs / 2) {
          // Not a restart: this process holds its sessions still, and its place in its stream.
          this.log.warn(`Cluster: this process was paused or stalled for ${stalled} ms (presence_ttl_in_ms ${this.cfg.ttlMs}), so its presence ` +
            'expired; registering again, and reading its stream from where it left off');
        } else {
          this.log.warn(`Cluster: this server's presence had expired (no heartbeat reached Redis for ${this.cfg.ttlMs} ms); registering again`);
        }
        await this.register(false);
      }
      for (const d of dead) await this.sweep(d);
    } catch (err) {
      this.log.vlog(1, `Cluster: heartbeat failed: ${describeError(err)}`);
    } finally {
      this.beating = false;
    }
  }

  private async sweep(id: string): Promise<void> {
    const removed = await this.link.script('gsfSweep', `removal of server ${id}`, [this.cfg.prefix, id, EXPIRED_KEPT_MS]);
    if (removed === 1) {
      this.stats.coord(Coord.sweptServers);
      this.log.info(`Cluster: server ${id} stopped heartbeating; its sessions and logins left presence`);
    }
  }

  /** Where an account is logged in: its server and session, or null. */
  async locate(account: string): Promise<{ server: string; sessionId: number } | null> {
    if (!this.link.up) throw this.link.unavailable();
    const v = await this.link.answerWithin('account lookup', this.link.script('gsfLocate', 'account lookup', [this.cfg.prefix, account]));
    if (typeof v !== 'string') return null;
    const bar = v.indexOf('|');
    return { server: v.slice(0, bar), sessionId: Number(v.slice(bar + 1)) };
  }

  /** Which live server holds a session, and its account; null when none does. */
  async session(sessionId: number): Promise<{ server: string; account: string | null } | null> {
    if (!this.link.up) throw this.link.unavailable();
    const v = await this.link.answerWithin('session lookup',
      this.link.script('gsfSession', 'session lookup', [this.cfg.prefix, String(sessionId)])) as [string, string] | null;
    if (!Array.isArray(v)) return null;
    return { server: v[0], account: v[1] === '' ? null : v[1] };
  }

  /**
   * Another process holds this server's id: this one stops heartbeating and says so; it does
   * not write presence again, and its stop removes nothing of the other's.
   */
  private leaveTakenOver(holder: string): void {
    if (this.takenOver) return;
    this.takenOver = true;
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    let who = 'another process';
    try {
      const other = JSON.parse(holder) as ServerInfo;
      who = `pid ${other.pid} on ${other.host} (started ${other.started})`;
    } catch {
      // An unreadable holder is still another process.
    }
    this.log.error(`GSF_ERR_CLUSTER_START: server id '${this.self}' was taken over by ${who} while this process was paused or cut off ` +
      'past presence_ttl_in_ms: this process has left the cluster (its sessions are served here only, and nothing reaches other servers); ' +
      'stop it, or give it its own Cluster.server_id');
    this.onTakenOver?.();
  }

  /** Stops heartbeating and removes this server's presence (graceful stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (!this.registered || !this.link.up || this.takenOver) return;
    try {
      await this.link.script('gsfDeregister', 'deregistration', [this.cfg.prefix, this.self, this.info.instance]);
    } catch (err) {
      this.log.warn(`Cluster: could not remove this server's presence (it expires in ${this.cfg.ttlMs} ms): ${describeError(err)}`);
    }
  }
}
