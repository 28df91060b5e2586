/**
 * Everything this server tells Redis, in one ordered queue (main thread): messages for other
 * servers' sessions, group publishes, requests and answers, and its own presence changes
 * (sessions opened and closed, groups joined and left, logins and logouts).
 *
 * Operations collected during one turn of the event loop become one batch (`batch.ts`), and a
 * batch is one call of the routing script (`scripts.ts`), which appends each destination's
 * records to that server's stream as one entry. One batch is in flight at a time, so batches
 * reach Redis in the order they were made, and with them every message to a given session.
 *
 * While Redis is away the batches wait (a failed one goes back to the front) and are sent once
 * it is back; a batch whose answer was lost may reach Redis twice, and receivers apply a batch
 * number once. Messages past `max_queued_messages` are dropped with a log line and a counter.
 */
import { randomBytes } from 'node:crypto';
import { native } from '../native.ts';
import { describeError, gsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import { createLineLimiter, type LineLimiter } from '../log/rate-limit.ts';
import type { ClusterConfig } from './config.ts';
import { BatchBuilder, type Op } from './batch.ts';
import { describeRecord } from './message-log.ts';
import { eachRecord, encodeControl, type ControlMessage } from './records.ts';
import { isRetryable, type RedisLink } from './redis-link.ts';
import { Rpc, Coord, type ClusterStats } from './stats.ts';

interface Batch {
  bn: number;
  ops: Op[];
  messages: number;
  bytes: number;
}

/** Answer of a login (`K` op). */
export type ClaimAnswer = { outcome: 'ok' } | { outcome: 'refused' | 'replaced'; server: string; sessionId: number };

/** What the routing script answers. */
type RouteAnswer = [unroutable: number[], answers: unknown[], learned: string[], expiredFor: string[]];

/** The longest group name a publish record holds (its length is a u16). */
const MAX_PUBLISH_GROUP_BYTES = 0xffff;

export class Outbox {
  /** Names this process's batches: receivers apply each (epoch, batch number) once. */
  readonly epoch = randomBytes(6).toString('hex');
  private self = '';
  private readonly builder = new BatchBuilder();
  private retry: Batch[] = [];
  private bn = 0;
  /** Messages not yet acknowledged by Redis (being collected, waiting, in flight). */
  private pending = 0;
  private inFlight = false;
  private scheduled = false;
  /** Until this server has registered (and after Redis lost its data, until it registered again). */
  private paused = true;
  private stopped = false;
  private logLevel = 0;
  private readonly drops: LineLimiter;
  private readonly idle: Array<() => void> = [];

  constructor(private readonly link: RedisLink, private readonly cfg: ClusterConfig, private readonly stats: ClusterStats,
    private readonly log: Logger) {
    this.drops = createLineLimiter({ perKeyPerSecond: 1, log });
    stats.queued(() => this.pending);
  }

  /** Sets `rpc_message_logging_level` (read live by the feature). */
  set messageLogLevel(level: number) {
    this.logLevel = level;
  }

  /** Messages waiting for Redis. */
  get waiting(): number {
    return this.pending;
  }

  /** Starts sending, as server `self` (after registration). */
  resume(self: string): void {
    this.self = self;
    this.paused = false;
    this.schedule();
  }

  /** Holds batches back (Redis lost its data: this server registers again first). */
  pause(): void {
    this.paused = true;
  }

  // ---- messages -----------------------------------------------------------------

  private admit(what: string): boolean {
    if (this.stopped) {
      this.dropped(Rpc.droppedFailed, 1, `${what}: the cluster link is stopping`);
      return false;
    }
    if (this.pending >= this.cfg.maxQueued) {
      this.dropped(Rpc.droppedQueueFull, 1, `${what}: ${this.pending} message(s) already wait for Redis (max_queued_messages)`);
      return false;
    }
    this.pending++;
    this.schedule();
    return true;
  }

  private dropped(counter: string, count: number, why: string): void {
    this.stats.rpc(counter, count);
    native.counterIncrease('engine', 'dropped_sends_cluster', count);
    this.drops.warn(counter, `GSF_ERR_CLUSTER_DROPPED: ${count} message(s) for other servers dropped: ${why}`);
  }

  /** A frame for a session on another server (or nowhere). */
  send(sessionId: number, frame: Uint8Array | string): void {
    if (this.admit(`send to session ${sessionId}`)) this.builder.session(sessionId, (w) => w.send(sessionId, frame));
  }

  close(sessionId: number, code: number, reason: string): void {
    if (this.admit(`close of session ${sessionId}`)) this.builder.session(sessionId, (w) => w.close(sessionId, code, reason));
  }

  group(sessionId: number, group: string, join: boolean): void {
    if (this.admit(`group change of session ${sessionId}`)) this.builder.session(sessionId, (w) => w.group(sessionId, group, join));
  }

  /** A publish for the group's members on other servers. */
  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void {
    if (Buffer.byteLength(group) > MAX_PUBLISH_GROUP_BYTES) {
      // Its record holds the name's length in 2 bytes: refused before anything is written.
      this.dropped(Rpc.droppedFailed, 1, `publish to a group whose name is over ${MAX_PUBLISH_GROUP_BYTES} bytes`);
      return;
    }
    if (this.admit(`publish to group '${group}'`)) this.builder.records('G', group, (w) => w.publish(group, json, msgpack));
  }

  /** A message for every session of every other server. */
  broadcastAll(json: Uint8Array, msgpack: Uint8Array): void {
    if (this.admit('broadcast')) this.builder.records('A', '', (w) => w.broadcast(json, msgpack));
  }

  /**
   * A control message for one server; `answer` learns whether that server was live. A message
   * that cannot be encoded throws (GSF_ERR_BAD_ARGUMENT) before anything is queued or counted.
   */
  toServer(server: string, message: ControlMessage, answer?: (live: boolean, err?: Error) => void): boolean {
    const body = encodeControl(message);
    if (!this.admit(`${message.op} for server ${server}`)) return false;
    this.builder.records('V', server, (w) => w.control(body), (value, err) => answer?.(value === 1, err));
    return true;
  }

  /** A control message for every other live server (throws as toServer for one it cannot encode). */
  toAll(message: ControlMessage): void {
    const body = encodeControl(message);
    if (this.admit(`${message.op} for every server`)) this.builder.records('A', '', (w) => w.control(body));
  }

  // ---- presence -----------------------------------------------------------------

  private presence(kind: 'O' | 'C' | 'J' | 'L' | 'K' | 'R', key: string, text: string, answer?: Op['answer']): Op {
    const op = this.builder.presence(kind, key, text, answer);
    this.schedule();
    return op;
  }

  sessionOpened(sessionId: number): void {
    this.presence('O', String(sessionId), '');
  }

  sessionClosed(sessionId: number): void {
    this.presence('C', String(sessionId), '');
  }

  groupHere(group: string, hasMembers: boolean): void {
    this.presence(hasMembers ? 'J' : 'L', group, '');
  }

  /** Claims an account for a session of this server; rejects when Redis is away or slow. */
  claim(account: string, sessionId: number, policy: string): Promise<ClaimAnswer> {
    if (!this.link.up) return Promise.reject(this.link.unavailable());
    return new Promise((resolve, reject) => {
      let refused = false;
      const timer = setTimeout(() => {
        // Refused now, even with its batch in flight (a stalled Redis may never answer). Should
        // Redis confirm the claim later, it is let go again (below); a batch that fails and goes
        // back to wait for Redis leaves it out.
        if (op.sent) op.expire = () => { op.cancelled = true; };
        else op.cancelled = true;
        refused = true;
        reject(gsfError('GSF_ERR_CLUSTER_UNAVAILABLE', `the login of '${account}' was not confirmed by Redis within ${this.cfg.requestTimeoutMs} ms`));
      }, this.cfg.requestTimeoutMs);
      const op = this.presence('K', account, `${sessionId}|${policy}`, (value, err) => {
        clearTimeout(timer);
        if (refused) {
          // The login was refused at its timeout: a claim Redis made since is let go.
          if (err === undefined && !String(value).startsWith('refused|')) this.release(account, sessionId);
          return;
        }
        if (err) {
          reject(err);
          return;
        }
        const text = String(value);
        if (text === 'ok') {
          resolve({ outcome: 'ok' });
          return;
        }
        const [outcome, holder] = [text.slice(0, text.indexOf('|')), text.slice(text.indexOf('|') + 1)];
        const bar = holder.indexOf('|');
        resolve({ outcome: outcome as 'refused' | 'replaced', server: holder.slice(0, bar), sessionId: Number(holder.slice(bar + 1)) });
      });
    });
  }

  release(account: string, sessionId: number): void {
    this.presence('R', account, String(sessionId));
  }

  // ---- flushing -----------------------------------------------------------------

  private schedule(): void {
    if (this.scheduled || this.paused || this.inFlight) return;
    this.scheduled = true;
    // After the loop's poll phase: everything the workers' flushes brought in this turn joins.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private cut(): Batch {
    const { ops, messages } = this.builder.take();
    let bytes = 0;
    for (const op of ops) if (typeof op.payload !== 'string') bytes += op.payload.length;
    return { bn: ++this.bn, ops, messages, bytes };
  }

  private args(batch: Batch): Array<string | Buffer> {
    const args: Array<string | Buffer> = [this.cfg.prefix, this.self, this.epoch, String(batch.bn), String(this.cfg.streamMaxLength)];
    for (const op of batch.ops) {
      if (op.cancelled) continue;
      op.sent = true;
      args.push(op.kind, op.key, op.payload);
    }
    return args;
  }

  private async flush(): Promise<void> {
    if (this.paused || this.inFlight) return;
    if (!this.link.up) return; // the link's ready event resumes
    const batch = this.retry.shift() ?? (this.builder.empty ? undefined : this.cut());
    if (batch === undefined) {
      this.settled();
      return;
    }
    this.inFlight = true;
    const args = this.args(batch);
    if (this.logLevel > 0) this.logBatch(batch);
    const operation = `flush of ${batch.messages} message(s)`;
    const start = performance.now();
    let retryLater = false;
    try {
      const [unroutable, answers, learned, expiredFor] = await this.link.script('gsfRoute', operation, args) as RouteAnswer;
      this.stats.flushed(operation, performance.now() - start);
      this.builder.learn(learned);
      const lost = this.unroutable(batch, unroutable, expiredFor);
      this.stats.rpc(Rpc.batchesSent);
      this.stats.rpc(Rpc.messagesSent, batch.messages - lost);
      this.stats.rpc(Rpc.bytesSent, batch.bytes);
      let a = 0;
      for (const op of batch.ops) {
        if (op.cancelled || op.answer === undefined) continue;
        const value = answers[a++];
        this.count(op, value);
        op.answer(value);
      }
      this.pending -= batch.messages;
    } catch (err) {
      for (const op of batch.ops) {
        op.sent = false;
        if (op.expire !== undefined && !op.cancelled) op.expire();
      }
      if (isRetryable(err) && !this.stopped) {
        this.retry.unshift(batch);
        this.stats.rpc(Rpc.retriedBatches);
        retryLater = this.link.up; // a busy Redis: try again shortly; a lost one: when it is back
      } else {
        this.pending -= batch.messages;
        this.dropped(Rpc.droppedFailed, batch.messages, `Redis refused their batch: ${describeError(err)}`);
        for (const op of batch.ops) if (!op.cancelled) op.answer?.(undefined, err as Error);
      }
    } finally {
      this.inFlight = false;
    }
    if (retryLater) setTimeout(() => void this.flush(), 100).unref();
    else this.schedule();
    if (this.builder.empty && this.retry.length === 0) this.settled();
  }

  /**
   * Counts the messages of S and D ops that reached no live server (as the listener counts its
   * own). Those meant for a server whose presence expired (`expiredFor`, from the script, or a
   * session remembered as that server's) are also logged, per server: it may be paused, and what
   * was written for it before its presence expired waits in its stream.
   */
  private unroutable(batch: Batch, positions: readonly number[], expiredFor: readonly string[]): number {
    if (positions.length === 0) return 0;
    const sent = batch.ops.filter((op) => !op.cancelled);
    let lost = 0;
    const expired = new Map<string, number>();
    positions.forEach((p, i) => {
      const op = sent[p - 1]!;
      lost += op.messages;
      const server = expiredFor[i] || (op.kind === 'S' ? this.builder.awayServer(Number(op.key)) : undefined);
      // A server that is not live holds no sessions now; one whose presence expired may come back.
      if (op.kind === 'D') this.builder.forgetServer(op.key, server !== undefined && server !== '');
      if (server) expired.set(server, (expired.get(server) ?? 0) + op.messages);
      if (this.logLevel > 0) {
        const why = server ? `server ${server}'s presence expired` : op.kind === 'D' ? `server ${op.key} is not live` : `session=${op.key} is on no live server`;
        this.log.info(`rpc message dropped: ${why} (${op.messages} message(s))`);
      }
    });
    this.stats.rpc(Rpc.droppedUnroutable, lost);
    native.counterIncrease('engine', 'dropped_sends_no_session', lost);
    for (const [server, count] of expired) {
      this.drops.warn(`expired:${server}`, `GSF_ERR_CLUSTER_DROPPED: ${count} message(s) for server ${server} dropped: its presence expired ` +
        '(no heartbeat of it reached Redis within presence_ttl_in_ms: stopped, or paused); counted in rpc_stat/dropped_unroutable');
    }
    return lost;
  }

  /** A server is live again (its heartbeat was seen): its sessions are found again. */
  serverBack(server: string): void {
    this.builder.back(server);
  }

  private count(op: Op, value: unknown): void {
    if (op.kind !== 'K') return;
    const text = String(value);
    this.stats.coord(Coord.logins);
    if (text.startsWith('replaced')) this.stats.coord(Coord.loginsReplaced);
    else if (text.startsWith('refused')) this.stats.coord(Coord.loginsRefused);
  }

  private logBatch(batch: Batch): void {
    for (const op of batch.ops) {
      if (op.cancelled || typeof op.payload === 'string') continue;
      const to = op.kind === 'V' || op.kind === 'D' ? `server=${op.key}` : op.kind === 'G' ? 'servers=group members' : op.kind === 'A' ? 'servers=all' : 'servers=session owner';
      for (const { kind, body } of eachRecord(op.payload)) this.log.info(`rpc message out: ${to}, ${describeRecord(kind, body, this.logLevel)}`);
    }
  }

  private settled(): void {
    if (this.inFlight || !this.builder.empty || this.retry.length > 0) return;
    for (const fn of this.idle.splice(0)) fn();
  }

  /**
   * Resolves once everything queued is acknowledged, or after `ms`; what is left then is dropped
   * (logged, counted), and nothing more is taken. With `andStop` false it only waits: messages
   * are still taken, and what is left stays queued.
   */
  async drain(ms: number, andStop = true): Promise<void> {
    if (!this.builder.empty || this.retry.length > 0 || this.inFlight) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.idle.push(() => {
          clearTimeout(timer);
          resolve();
        });
        this.schedule();
      });
    }
    if (!andStop) return;
    this.stopped = true;
    const left = this.pending;
    if (left > 0) this.dropped(Rpc.droppedFailed, left, 'the server stopped while Redis was unreachable');
    const ops = [...this.retry.flatMap((b) => b.ops), ...this.builder.take().ops];
    for (const op of ops) if (!op.cancelled) op.answer?.(undefined, this.link.unavailable());
    this.retry = [];
    this.pending = 0;
    this.drops.close();
  }
}
