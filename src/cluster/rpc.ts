/**
 * Requests between servers (main thread): a request is a control record for the named server,
 * its answer a control record back, both through Redis in the senders' order. Used for the
 * cluster counters, broadcasts of maintenance and configuration, invoking an event on a named
 * server and logging an account out elsewhere. A server that does not answer within
 * `request_timeout_in_ms` fails the request with GSF_ERR_CLUSTER_TIMEOUT.
 */
import { describeError, gsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import type { Outbox } from './outbox.ts';
import type { ControlMessage } from './records.ts';
import type { RedisLink } from './redis-link.ts';
import { Rpc, type ClusterStats } from './stats.ts';

/** Serves one method: gets the request's arguments and the asking server; its value is the answer. */
export type RpcHandler = (args: unknown, from: string) => unknown;

interface Waiting {
  server: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** The answers of every server asked: values by server id, and why the others gave none. */
export interface FanOut {
  answers: Record<string, unknown>;
  failed: Record<string, string>;
}

export class RpcClient {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private readonly handlers = new Map<string, RpcHandler>();

  constructor(private readonly self: string, private readonly outbox: Outbox, private readonly link: RedisLink,
    private readonly timeoutMs: number, private readonly stats: ClusterStats, private readonly log: Logger) {}

  /** Serves `method` for other servers (and for this one, without Redis). */
  handle(method: string, handler: RpcHandler): void {
    this.handlers.set(method, handler);
  }

  /** Asks one server; this server's own handler runs directly. */
  request(server: string, method: string, args: unknown): Promise<unknown> {
    if (server === this.self) return this.runLocal(method, args);
    if (!this.link.up) return Promise.reject(this.link.unavailable());
    const id = this.nextId++;
    this.stats.rpc(Rpc.requestsSent);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        this.stats.rpc(Rpc.requestTimeouts);
        reject(gsfError('GSF_ERR_CLUSTER_TIMEOUT', server, method, this.timeoutMs));
      }, this.timeoutMs);
      this.waiting.set(id, { server, resolve, reject, timer });
      const fail = (err: Error): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        reject(err);
      };
      let queued: boolean;
      try {
        queued = this.outbox.toServer(server, { op: 'rq', id, from: this.self, method, args }, (live, err) => {
          if (err) fail(err);
          else if (!live) fail(gsfError('GSF_ERR_CLUSTER_UNKNOWN_SERVER', server));
        });
      } catch (err) {
        fail(err as Error); // arguments that cannot be encoded: nothing was sent
        return;
      }
      if (!queued) fail(gsfError('GSF_ERR_CLUSTER_UNAVAILABLE', 'too many messages wait for Redis'));
    });
  }

  /** Asks every server in `servers` at once; never rejects: failures are listed by server. */
  async requestAll(servers: readonly string[], method: string, args: unknown): Promise<FanOut> {
    const out: FanOut = { answers: {}, failed: {} };
    await Promise.all(servers.map(async (server) => {
      try {
        out.answers[server] = await this.request(server, method, args);
      } catch (err) {
        out.failed[server] = describeError(err);
      }
    }));
    return out;
  }

  private async runLocal(method: string, args: unknown): Promise<unknown> {
    const handler = this.handlers.get(method);
    if (handler === undefined) throw new Error(`no cluster method '${method}'`);
    return handler(args, this.self);
  }

  /** A request or answer arrived (control records `rq` and `rs`). */
  receive(message: ControlMessage): void {
    if (message.op === 'rs') {
      const w = this.waiting.get(message.id);
      if (w === undefined) return; // timed out meanwhile
      this.waiting.delete(message.id);
      clearTimeout(w.timer);
      if (message.ok) w.resolve(message.value);
      else w.reject(new Error(`server ${w.server}: ${message.error ?? 'the request failed'}`));
      return;
    }
    if (message.op !== 'rq') return;
    this.stats.rpc(Rpc.requestsServed);
    const answer = (ok: boolean, value?: unknown, error?: string): void => {
      try {
        this.outbox.toServer(message.from, ok ? { op: 'rs', id: message.id, ok, value } : { op: 'rs', id: message.id, ok, error });
      } catch (err) {
        // A value that cannot be encoded: the asker gets the reason instead of waiting out its timeout.
        this.log.warn(`Cluster: the answer to '${message.method}' from server ${message.from} cannot be sent: ${describeError(err)}`);
        this.outbox.toServer(message.from, { op: 'rs', id: message.id, ok: false, error: describeError(err) });
      }
    };
    this.runLocal(message.method, message.args).then((v) => answer(true, v ?? null), (err: unknown) => {
      this.log.warn(`Cluster: request '${message.method}' from server ${message.from} failed: ${describeError(err)}`);
      answer(false, undefined, describeError(err));
    });
  }

  /** Fails every request still waiting (stop). */
  close(): void {
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      w.reject(gsfError('GSF_ERR_SHUTTING_DOWN', `cluster request ${id}`));
    }
    this.waiting.clear();
  }
}
