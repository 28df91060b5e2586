/**
 * The connections to Redis (main thread). ioredis is loaded here, and only when the `Cluster`
 * component is listed, so a single server never loads a Redis client.
 *
 * Two connections: `cmd` runs scripts and commands, `reader` blocks on this server's stream.
 * Neither queues commands while Redis is away (`enableOfflineQueue: false`) nor resends them
 * after a reconnect (`autoResendUnfulfilledCommands: false`): the outbox keeps what was not
 * acknowledged and sends it again itself, once, in order. Reconnection is ioredis's, with a
 * backoff capped at 1 s. Each time the command connection is ready again, Redis's `run_id`
 * tells whether it is the same Redis (a network cut) or a restarted one that lost its data.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { GsfError, describeError, gsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import { shownUrl, type ClusterConfig } from './config.ts';
import { Coord, COORD, type ClusterStats } from './stats.ts';
import { SCRIPTS, type ScriptName } from './scripts.ts';

type ScriptCall = (...args: Array<string | Buffer | number>) => Promise<unknown>;

/** Errors Redis answers while it cannot serve for a moment: the command may succeed later. */
const TRANSIENT = /^(LOADING|BUSY|READONLY|MASTERDOWN|TRYAGAIN|OOM|NOREPLICAS)\b/;

/** Whether a failed command may be sent again (the connection failed, or Redis is busy). */
export function isRetryable(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  if (e?.name !== 'ReplyError') return true;
  return TRANSIENT.test(e.message ?? '');
}

export class RedisLink {
  /** True while the command connection is ready. */
  up = false;
  private runId = '';
  private downSince = 0;
  private lastError = '';
  private readonly readyListeners: Array<(lostData: boolean) => void> = [];
  private readonly downListeners: Array<() => void> = [];
  private closing = false;

  private constructor(readonly cmd: Redis, readonly reader: Redis, private readonly cfg: ClusterConfig,
    private readonly log: Logger, private readonly stats: ClusterStats) {}

  /** Connects both connections; fails the start when Redis does not answer within `connect_timeout_in_ms`. */
  static async open(cfg: ClusterConfig, log: Logger, stats: ClusterStats): Promise<RedisLink> {
    const { Redis: RedisClient } = await import('ioredis');
    const options: RedisOptions = {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      connectTimeout: Math.min(cfg.connectTimeoutMs, 10000),
      retryStrategy: (times) => Math.min(50 * times, 1000),
      lazyConnect: true,
    };
    const cmd = new RedisClient(cfg.redisUrl, { ...options, connectionName: 'gsf-cluster' });
    const reader = new RedisClient(cfg.redisUrl, { ...options, connectionName: 'gsf-cluster-reader' });
    const link = new RedisLink(cmd, reader, cfg, log, stats);
    cmd.on('error', (err: Error) => link.failed(err));
    reader.on('error', (err: Error) => link.failed(err));
    try {
      await link.connectWithin(cfg.connectTimeoutMs);
    } catch (err) {
      cmd.disconnect();
      reader.disconnect();
      throw err;
    }
    for (const [name, lua] of Object.entries(SCRIPTS)) cmd.defineCommand(name, { numberOfKeys: 0, lua });
    cmd.on('ready', () => void link.ready());
    cmd.on('close', () => link.down());
    await link.ready();
    return link;
  }

  private async connectWithin(ms: number): Promise<void> {
    const url = shownUrl(this.cfg.redisUrl);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(gsfError('GSF_ERR_CLUSTER_START',
        `cannot reach Redis at ${url} within ${ms} ms${this.lastError ? ` (${this.lastError})` : ''}; check Cluster.redis_url and that Redis runs`)), ms);
    });
    // connect() rejects on the first failed attempt; ioredis keeps trying until the timeout.
    const attempt = (c: Redis): Promise<void> => new Promise((resolve) => {
      if (c.status === 'ready') resolve();
      c.once('ready', () => resolve());
      c.connect().catch(() => undefined);
    });
    try {
      await Promise.race([Promise.all([attempt(this.cmd), attempt(this.reader)]), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  onReady(fn: (lostData: boolean) => void): void {
    this.readyListeners.push(fn);
  }

  onDown(fn: () => void): void {
    this.downListeners.push(fn);
  }

  private failed(err: Error): void {
    const text = describeError(err);
    if (text === this.lastError && !this.up) return; // one line per kind of trouble while down
    this.lastError = text;
    this.stats.coord(Coord.errors);
    if (!this.closing) this.log.warn(`Cluster: Redis at ${shownUrl(this.cfg.redisUrl)}: ${text}`);
  }

  private async ready(): Promise<void> {
    let runId = '';
    try {
      const info = await this.cmd.info('server');
      runId = /run_id:(\w+)/.exec(info)?.[1] ?? '';
    } catch (err) {
      this.failed(err as Error);
      return; // the connection went again; the next ready tries again
    }
    const lostData = this.runId !== '' && runId !== this.runId;
    const was = this.runId;
    this.runId = runId;
    this.up = true;
    this.lastError = '';
    this.stats.set(COORD, Coord.connected, 1);
    if (was !== '') {
      this.stats.coord(Coord.reconnects);
      if (lostData) this.stats.coord(Coord.dataLosses);
      const away = this.downSince > 0 ? ` after ${((Date.now() - this.downSince) / 1000).toFixed(1)} s` : '';
      this.log.info(`Cluster: Redis at ${shownUrl(this.cfg.redisUrl)} is back${away}${lostData ? ' (restarted without its data: registering this server again)' : ''}`);
      this.downSince = 0;
    }
    for (const fn of this.readyListeners) fn(lostData);
  }

  private down(): void {
    if (!this.up) return;
    this.up = false;
    this.downSince = Date.now();
    this.stats.set(COORD, Coord.connected, 0);
    if (!this.closing) {
      this.log.warn(`Cluster: lost Redis at ${shownUrl(this.cfg.redisUrl)}; reconnecting (messages for other servers wait, up to max_queued_messages)`);
    }
    for (const fn of this.downListeners) fn();
  }

  /** Runs a script by name, timed; rejects with the connection's or Redis's error. */
  async script(name: ScriptName, operation: string, args: Array<string | Buffer | number>): Promise<unknown> {
    const start = performance.now();
    try {
      return await (this.cmd as unknown as Record<string, ScriptCall>)[name]!(...args);
    } catch (err) {
      this.stats.coord(Coord.errors);
      throw err;
    } finally {
      this.stats.command(operation, performance.now() - start);
    }
  }

  /**
   * `work`, or GSF_ERR_CLUSTER_UNAVAILABLE once `request_timeout_in_ms` has passed without its
   * answer: a Redis that keeps its connection open and answers nothing (a stalled host) must not
   * hold a caller forever. The command itself is not taken back.
   */
  answerWithin<T>(operation: string, work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(gsfError('GSF_ERR_CLUSTER_UNAVAILABLE',
        `Redis at ${shownUrl(this.cfg.redisUrl)} did not answer the ${operation} within ${this.cfg.requestTimeoutMs} ms`)), this.cfg.requestTimeoutMs);
    });
    work.catch(() => undefined); // an answer after the timeout is nobody's
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }

  /** Runs a plain command, timed; it answers within `request_timeout_in_ms` (answerWithin). */
  async command<T>(operation: string, run: (r: Redis) => Promise<T>): Promise<T> {
    if (!this.up) throw this.unavailable();
    const start = performance.now();
    try {
      return await this.answerWithin(operation, run(this.cmd));
    } catch (err) {
      this.stats.coord(Coord.errors);
      throw err;
    } finally {
      this.stats.command(operation, performance.now() - start);
    }
  }

  /** The error for calls that need Redis while it is away. */
  unavailable(): GsfError {
    return gsfError('GSF_ERR_CLUSTER_UNAVAILABLE', `Redis at ${shownUrl(this.cfg.redisUrl)} is unreachable${this.lastError ? ` (${this.lastError})` : ''}`);
  }

  /** Closes both connections (after the last flush). */
  async close(): Promise<void> {
    this.closing = true;
    this.reader.disconnect();
    try {
      if (this.cmd.status === 'ready') await this.cmd.quit();
      else this.cmd.disconnect();
    } catch {
      this.cmd.disconnect();
    }
  }
}
