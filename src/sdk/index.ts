/**
 * The gsf client SDK (`import { GsfClient } from 'gsf/sdk'`): connects to a session port
 * with a client version and a codec, correlates requests with replies, and delivers server
 * pushes, `_maintenance` notices, error frames and close reasons. Runs in Node (with the `ws`
 * package when there is no global WebSocket) and in browsers.
 */
import { Packr, Unpackr } from 'msgpackr';
import { msgpackBody, wellFormedText } from './msgpack-body.ts';
import { MAX_TIMER_MS, timeoutProblem } from './timeouts.ts';
import {
  CloseCode, closeReason, EngineType, ProtocolError, type CodecName, type Envelope, type MaintenanceNotice, type ProtocolErrorBody,
} from '../session/protocol.ts';

export { CloseCode, EngineType, ProtocolError, type CodecName, type Envelope, type MaintenanceNotice, type ProtocolErrorBody };

export type { WebSocketConstructor, WebSocketLike } from './websocket.ts';
import { defaultWebSocket, type WebSocketConstructor, type WebSocketLike } from './websocket.ts';

export interface ConnectOptions {
  /** `ws://host:port` (a path and query are kept; `version` and `codec` are added). */
  url: string;
  /** The client version the server's version gate checks. */
  version: string;
  codec?: CodecName;
  /** WebSocket implementation; default: the global one, else the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /** Default time limit of `request` (ms; default 10000); 0 or Infinity waits forever. Negative or NaN: `connect` rejects (RangeError). */
  requestTimeoutMs?: number;
  /** How long `connect` waits for the WebSocket handshake (ms; default 10000); 0 or Infinity waits forever. Negative or NaN: RangeError. */
  connectTimeoutMs?: number;
}

/** Why a session ended. */
export interface CloseInfo {
  code: number;
  reason: string;
}

/** A request answered with an `_error` frame, or not answered in time. */
export class GsfRequestError extends Error {
  constructor(readonly code: string, message: string, readonly type?: string) {
    super(message);
    this.name = 'GsfRequestError';
  }
}

type Handler = (body: unknown, envelope: Envelope) => void;

const packr = new Packr({ useRecords: false });

const unpackr = new Unpackr({ useRecords: false });
/** Reads any msgpack map (keys of any kind) into a Map: a frame `unpackr` refuses still gives its id. */
const lenient = new Unpackr({ useRecords: false, mapsAsObjects: false });


/** Builds the client URL: `ws://HOST:PORT/?version=<v>&codec=json|msgpack`. */
export function clientUrl(url: string, version: string, codec: CodecName): string {
  const u = new URL(url);
  if (u.pathname === '') u.pathname = '/';
  u.searchParams.set('version', version);
  u.searchParams.set('codec', codec);
  return u.toString();
}

/**
 * Calls a handler of the game's: what it throws is thrown again on its own (the page's or the
 * process's uncaught-error path), not into the socket's frame reader, which would stop reading,
 * and the other handlers and the next frames are delivered as always.
 */
function callHandler<A extends unknown[]>(fn: (...args: A) => void, ...args: A): void {
  try {
    fn(...args);
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}

export class GsfClient {
  /** Resolves when the connection ends (also after a refusal at connect time). */
  readonly closed: Promise<CloseInfo>;
  private resolveClosed!: (info: CloseInfo) => void;
  private closeInfo: CloseInfo | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { type: string; resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> | null }>();
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly waiters: Array<{ type: string; resolve(e: Envelope): void; reject(e: Error): void }> = [];
  /** Pushed messages nobody was waiting for or handling yet (`next` looks here first). */
  private readonly backlog: Envelope[] = [];
  /**
   * Per type, handlers `on` gave kept pushes to that they have not run yet: a push arriving
   * meanwhile queues behind them, so each handler sees its type's pushes in arrival order.
   */
  private readonly catchingUp = new Map<string, Map<Handler, Envelope[]>>();
  private readonly errorHandlers = new Set<(e: ProtocolErrorBody) => void>();
  /** The last maintenance notice, while maintenance is on. */
  maintenance: MaintenanceNotice | null = null;

  private constructor(private readonly ws: WebSocketLike, readonly codec: CodecName, private readonly requestTimeoutMs: number) {
    this.closed = new Promise((resolve) => { this.resolveClosed = resolve; });
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => this.ended({ code: ev.code, reason: ev.reason });
  }

  /**
   * Connects; resolves once the socket is open. A refused connection (version gate, bad codec)
   * opens and is then closed by the server: see `closed` for the code and reason.
   */
  static async connect(options: ConnectOptions): Promise<GsfClient> {
    // Checked before any socket opens.
    const limit = options.connectTimeoutMs ?? 10_000;
    const requestLimit = options.requestTimeoutMs ?? 10_000;
    const problem = timeoutProblem('connectTimeoutMs', limit) ?? timeoutProblem('requestTimeoutMs', requestLimit);
    if (problem !== null) throw problem;
    const codec = options.codec ?? 'json';
    const Ctor = options.WebSocket ?? await defaultWebSocket();
    const ws = new Ctor(clientUrl(options.url, options.version, codec));
    ws.binaryType = 'arraybuffer';
    const client = new GsfClient(ws, codec, requestLimit);
    let timer: ReturnType<typeof setTimeout> | null = null;
    try {
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = (ev) => reject(new Error(`cannot connect to ${options.url}: ${(ev as { message?: string })?.message ?? 'connection error'}`));
        void client.closed.then((info) => reject(new Error(`connection closed: ${info.code} ${info.reason}`)));
        // A server that takes the TCP connection and never answers the handshake.
        if (limit > 0 && limit <= MAX_TIMER_MS) {
          timer = setTimeout(() => {
            reject(new Error(`cannot connect to ${options.url}: no WebSocket handshake within ${limit} ms`));
            ws.onerror = () => undefined;
            ws.close();
          }, limit);
        }
      });
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
    // From here a socket error (a frame the client cannot read) ends the connection: `closed`
    // tells, and the process goes on (without a listener the `ws` package would throw).
    ws.onerror = () => undefined;
    return client;
  }

  /** True until the connection ends. */
  get open(): boolean {
    return this.closeInfo === null;
  }

  /**
   * Sends a message without waiting for an answer. Throws `GsfRequestError` code `closed` once
   * the connection has ended (nothing would carry it), as `request` rejects.
   */
  send(type: string, body?: unknown): void {
    if (this.closeInfo) throw new GsfRequestError('closed', `'${type}' not sent: connection closed: ${this.closeInfo.code} ${this.closeInfo.reason}`, type);
    if (this.closing !== null) throw new GsfRequestError('closed', `'${type}' not sent: the connection is closing (close(${this.closing}) was called)`, type);
    this.write({ type, body });
  }

  /** The code `close` was called with, until the connection has ended (nothing more is sent meanwhile). */
  private closing: number | null = null;

  /**
   * Sends a message with a request id and resolves with the reply's body (rejects on an `_error`
   * frame). A `timeoutMs` that is negative or NaN rejects (RangeError), nothing sent.
   */
  request<T = unknown>(type: string, body?: unknown, timeoutMs = this.requestTimeoutMs): Promise<T> {
    const problem = timeoutProblem('timeoutMs', timeoutMs);
    if (problem !== null) return Promise.reject(problem);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.closeInfo) {
        reject(new GsfRequestError('closed', `connection closed: ${this.closeInfo.code} ${this.closeInfo.reason}`, type));
        return;
      }
      if (this.closing !== null) {
        reject(new GsfRequestError('closed', `'${type}' not sent: the connection is closing (close(${this.closing}) was called)`, type));
        return;
      }
      // The server ignores every message while under maintenance: no reply would come.
      if (this.maintenance !== null) {
        reject(new GsfRequestError('maintenance', `'${type}' not sent: the server is under maintenance until ${this.maintenance.date_end} and ignores messages meanwhile`, type));
        return;
      }
      // 0, or past what a timer can wait (about 24.8 days), is no limit.
      const timer = timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS
        ? setTimeout(() => {
          this.pending.delete(id);
          reject(new GsfRequestError('timeout', `no reply to '${type}' within ${timeoutMs} ms`, type));
        }, timeoutMs)
        : null;
      try {
        this.write({ type, body, id });
      } catch (err) {
        if (timer !== null) clearTimeout(timer);
        reject(err as Error);
        return;
      }
      this.pending.set(id, { type, resolve: resolve as (v: unknown) => void, reject, timer });
    });
  }

  /**
   * Calls `handler` for every message of `type` the server pushes (replies to requests excluded),
   * starting with those that arrived before while nothing handled that type (a welcome an
   * opened handler pushed before `connect` resolved), right after this call returns.
   */
  on<B = unknown>(type: string, handler: (body: B, envelope: Envelope<B>) => void): () => void {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, set = new Set());
    const fn = handler as Handler;
    set.add(fn);
    const early = this.backlog.filter((e) => e.type === type);
    if (early.length > 0) {
      for (let i = this.backlog.length - 1; i >= 0; i--) if (this.backlog[i]!.type === type) this.backlog.splice(i, 1);
      let queues = this.catchingUp.get(type);
      if (!queues) this.catchingUp.set(type, queues = new Map());
      queues.set(fn, early);
      queueMicrotask(() => this.catchUp(type, fn, early));
    }
    return () => {
      if (!set.delete(fn)) return;
      // Kept pushes it had not run yet are kept again, for `next` or the next `on` (handlers of
      // the type added after it never had them).
      const queues = this.catchingUp.get(type);
      const left = queues?.get(fn);
      if (left === undefined) return;
      queues!.delete(fn);
      this.backlog.unshift(...left);
    };
  }

  /** Runs the kept pushes `on` gave `fn`, and those that arrived meanwhile, in order. */
  private catchUp(type: string, fn: Handler, queue: Envelope[]): void {
    const queues = this.catchingUp.get(type);
    try {
      // Stops when the handler is removed (its `off` keeps what is left).
      while (queues?.get(fn) === queue && queue.length > 0) {
        const e = queue.shift()!;
        callHandler(fn, e.body, e);
      }
    } finally {
      if (queues?.get(fn) === queue && queue.length === 0) queues.delete(fn);
    }
  }

  /**
   * Resolves with the next pushed message of `type`, including one that arrived before the call
   * while nothing handled that type (up to 1000 such messages are kept).
   */
  next<B = unknown>(type: string): Promise<Envelope<B>> {
    const i = this.backlog.findIndex((e) => e.type === type);
    if (i >= 0) return Promise.resolve(this.backlog.splice(i, 1)[0] as Envelope<B>);
    if (this.closeInfo) return Promise.reject(this.closedError(this.closeInfo, type));
    return new Promise((resolve, reject) => this.waiters.push({ type, resolve: resolve as (e: Envelope) => void, reject }));
  }

  /** Error frames that answer no request (e.g. a message sent with `send`). */
  onError(handler: (error: ProtocolErrorBody) => void): () => void {
    this.errorHandlers.add(handler);
    return () => this.errorHandlers.delete(handler);
  }

  /** Maintenance started or changed (`_maintenance`). */
  onMaintenance(handler: (notice: MaintenanceNotice) => void): () => void {
    return this.on<MaintenanceNotice>(EngineType.maintenance, handler);
  }

  /** Maintenance ended (`_maintenance_end`). */
  onMaintenanceEnd(handler: (notice: MaintenanceNotice) => void): () => void {
    return this.on<MaintenanceNotice>(EngineType.maintenanceEnd, handler);
  }

  /**
   * Closes the connection and resolves when it has ended. A reason is cut to the 123 bytes a close
   * frame holds. A code other than 1000 and the private-use 4000–4999 rejects, and the connection
   * stays open: the WebSocket API refuses all but 1000 and 3000–4999, and a gsf server takes
   * 3000–3999 (codes registered for libraries) for a protocol error, losing code and reason.
   */
  close(code = 1000, reason = ''): Promise<CloseInfo> {
    if (!this.closeInfo) {
      if (code !== 1000 && !(Number.isInteger(code) && code >= 4000 && code <= 4999)) {
        return Promise.reject(new RangeError(`close code must be 1000 or from 4000 to 4999 (got ${String(code)})`));
      }
      try {
        this.ws.close(code, closeReason(String(reason)));
      } catch (err) {
        return Promise.reject(err as Error);
      }
      this.closing ??= code;
    }
    return this.closed;
  }

  /** Sends raw data as is (tests of the server's protocol checks). */
  sendRaw(data: string | Uint8Array): void {
    this.ws.send(data);
  }

  private write(envelope: Envelope): void {
    if (this.codec === 'json') this.ws.send(JSON.stringify(envelope));
    else this.ws.send(packr.pack({ ...envelope, type: wellFormedText(envelope.type), body: msgpackBody(envelope.body, 0) }));
  }

  private receive(data: unknown): void {
    let envelope: Envelope;
    try {
      envelope = (typeof data === 'string' ? JSON.parse(data) : unpackr.unpack(new Uint8Array(data as ArrayBuffer))) as Envelope;
    } catch (err) {
      if (typeof data !== 'string') this.undecodable(new Uint8Array(data as ArrayBuffer), err);
      return;
    }
    // A frame that is no envelope (not an object with a string type) is not the protocol: dropped.
    if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope) || typeof envelope.type !== 'string') return;
    if (envelope.type === EngineType.maintenance) this.maintenance = envelope.body as MaintenanceNotice;
    if (envelope.type === EngineType.maintenanceEnd) this.maintenance = null;
    if (envelope.id !== undefined) {
      const p = this.pending.get(envelope.id);
      if (p) {
        this.pending.delete(envelope.id);
        if (p.timer !== null) clearTimeout(p.timer);
        if (envelope.type === EngineType.error) {
          const e = (typeof envelope.body === 'object' && envelope.body !== null ? envelope.body : {}) as Partial<ProtocolErrorBody>;
          p.reject(new GsfRequestError(e.code ?? 'unknown', e.message ?? 'an error frame without a body', e.type));
        } else {
          p.resolve(envelope.body);
        }
        return;
      }
      // The reply to a request of ours that is no longer waiting (it timed out): its caller was
      // told already. Ids are this client's, in order, so no list of them is kept.
      if (Number.isSafeInteger(envelope.id) && envelope.id > 0 && envelope.id < this.nextId) return;
    }
    if (envelope.type === EngineType.error) for (const fn of [...this.errorHandlers]) callHandler(fn, envelope.body as ProtocolErrorBody);
    const i = this.waiters.findIndex((w) => w.type === envelope.type);
    if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(envelope);
    const handlers = this.handlers.get(envelope.type);
    if (handlers && handlers.size > 0) {
      const queues = this.catchingUp.get(envelope.type);
      // The handlers as the push arrived: one added while it is handed out (by another, or by
      // itself after an off) gets the pushes that come after, not this one.
      for (const fn of [...handlers]) {
        const queue = queues?.get(fn);
        if (queue !== undefined) queue.push(envelope);
        else callHandler(fn, envelope.body, envelope);
      }
    }
    else if (i < 0 && (envelope.type !== EngineType.error || this.errorHandlers.size === 0)) {
      this.backlog.push(envelope);
      if (this.backlog.length > 1000) this.backlog.shift();
    }
  }

  /**
   * A msgpack frame this client cannot decode (a body's map keyed by a map, which msgpack allows
   * and a JavaScript object cannot hold): the request it answers, when its id can be read,
   * rejects with code `undecodable` rather than waiting out its time limit.
   */
  private undecodable(bytes: Uint8Array, err: unknown): void {
    let id: unknown;
    try {
      const frame = lenient.unpack(bytes) as unknown;
      if (frame instanceof Map) id = frame.get('id');
    } catch {
      return;
    }
    const p = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (p === undefined) return;
    this.pending.delete(id as number);
    if (p.timer !== null) clearTimeout(p.timer);
    p.reject(new GsfRequestError('undecodable', `the reply to '${p.type}' cannot be decoded: ${err instanceof Error ? err.message : String(err)}`, p.type));
  }

  private ended(info: CloseInfo): void {
    if (this.closeInfo) return;
    this.closeInfo = info;
    for (const p of this.pending.values()) {
      if (p.timer !== null) clearTimeout(p.timer);
      p.reject(this.closedError(info, p.type));
    }
    this.pending.clear();
    for (const w of this.waiters.splice(0)) w.reject(this.closedError(info, w.type));
    this.resolveClosed(info);
  }

  private closedError(info: CloseInfo, type: string): GsfRequestError {
    return new GsfRequestError('closed', `connection closed: ${info.code} ${info.reason}`, type);
  }
}
