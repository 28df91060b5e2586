/**
 * The session listener (component `SessionService`) on uWebSockets.js, main thread.
 *
 * Per message the main thread does little: the maintenance gate, the size and frame-kind
 * checks, a peek at the type of canonical frames (to name the event and refuse unknown types
 * at once), and a copy of the raw bytes into the push stage, which queues the turn's messages
 * as network events on their sessions' tags in one native call (`push-stage.ts`).
 * Decoding, handlers and encoding run on event workers; their outbound operations come back
 * in `OutboundBatch`es and are written to the sockets here.
 */
import uWS from 'uWebSockets.js';
import { listenUws, type Listening } from '../api/listen.ts';
import { native, EventKind } from '../native.ts';
import { intern } from '../events/runtime.ts';
import { randomTag } from '../events/tags.ts';
import { encodePayload } from '../events/codec.ts';
import type { ThreadHost } from '../host.ts';
import { DecodeError, decodeFrame, encodeFrame, peekTypeSpan, TYPE_SPAN, typeText, withCodecBit } from './codec.ts';
import { logSessionMessage } from './message-log.ts';
import { CLOSED_EVENT, MESSAGE_EVENT, OPENED_EVENT, sessionHandlers, type SessionHandlers } from './handlers.ts';
import { applyOps } from './apply-ops.ts';
import { PushStage } from './push-stage.ts';
import { closeReason, CODECS, CloseCode, EngineType, ProtocolError, type CodecName, type ProtocolErrorBody } from './protocol.ts';
import { checkClientVersion } from './version-gate.ts';
import type { SessionClosedInfo, SessionOpenedInfo } from './types.ts';

export interface SessionServiceOptions {
  address: string;
  port: number;
  maxMessageBytes: number;
  maxBackpressureBytes: number;
  idleTimeoutSec: number;
  sendPings: boolean;
}

interface SessionData {
  id: number;
  codec: CodecName;
  version: string;
  /** Set when the upgrade is refused: the socket is closed with it as soon as it opens. */
  refuse: { code: number; reason: string } | null;
  open: boolean;
  /** The socket, once open (saves a native `getUserData` per outbound frame). */
  ws: Socket | null;
}

/**
 * uWS hands every callback of a connection the same socket object: the session data is also
 * kept on it as a plain property, read per message without a native `getUserData` call.
 */
type Socket = uWS.WebSocket<SessionData> & { session?: SessionData };

/** How many message types (handled or not) the listener remembers by name. */
const MAX_REMEMBERED_TYPES = 4096;

/** Counts for tests and diagnostics. */
export interface SessionStats {
  opened: number;
  closed: number;
  refused: number;
  messages: number;
  protocolErrors: number;
  droppedInMaintenance: number;
  backpressureCloses: number;
}

export class SessionService {
  readonly stats: SessionStats = { opened: 0, closed: 0, refused: 0, messages: 0, protocolErrors: 0, droppedInMaintenance: 0, backpressureCloses: 0 };
  private readonly app = uWS.App();
  private readonly sessions = new Map<number, SessionData>();
  private listening: Listening | null = null;
  private readonly handlers: SessionHandlers;
  private readonly messageHandlerId: number;
  private readonly stage: PushStage;
  private readonly messageNameId: number;
  /** nameId per known message type, -1 for types no plugin handles. */
  private readonly typeIds = new Map<string, number>();
  /** The last handled type seen, as bytes, and its nameId: a repeat needs no string or map lookup. */
  private lastType = new Uint8Array(0);
  private lastTypeId = -1;
  private logLevel: number;
  /** Maintenance gate, set by the maintenance feature; null: off. */
  maintenanceFrame: ((codec: CodecName) => string | Uint8Array) | null = null;
  /** Called after a session closed (the account manager logs it out); returns its account. */
  onSessionClosed: (sessionId: number) => string | null = () => null;

  constructor(readonly host: ThreadHost, private readonly options: SessionServiceOptions) {
    this.handlers = sessionHandlers(host.runtime);
    this.messageHandlerId = intern(MESSAGE_EVENT);
    this.messageNameId = intern(MESSAGE_EVENT);
    this.stage = new PushStage(this.messageHandlerId);
    this.logLevel = host.flags.get<number>('session_message_logging_level');
    host.flags.onChange('session_message_logging_level', (_n, v) => { this.logLevel = v as number; });
    const hardLimit = options.maxMessageBytes * 4 + 1024;
    this.app.ws<SessionData>('/*', {
      maxPayloadLength: hardLimit,
      idleTimeout: options.idleTimeoutSec,
      sendPingsAutomatically: options.sendPings,
      maxBackpressure: options.maxBackpressureBytes * 2 + hardLimit,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.open(ws),
      message: (ws, message, isBinary) => this.message(ws, message, isBinary),
      close: (ws, code, message) => this.closed(ws, code, message),
    });
  }

  get port(): number {
    return this.listening?.port ?? 0;
  }

  /** Connected sessions. */
  get size(): number {
    return this.sessions.size;
  }

  has(sessionId: number): boolean {
    return this.sessions.has(sessionId);
  }

  sessionIds(): number[] {
    return [...this.sessions.keys()];
  }

  async listen(): Promise<number> {
    this.listening = await listenUws(this.app, this.options.address, this.options.port, 'SessionService');
    return this.listening.port;
  }

  /** Stops listening and closes every session with 1001. */
  close(): void {
    this.listening?.close();
    this.stage.flush();
    for (const d of [...this.sessions.values()]) d.ws!.end(CloseCode.goingAway, 'server stopping');
  }

  private upgrade(res: uWS.HttpResponse, req: uWS.HttpRequest, context: uWS.us_socket_context_t): void {
    const version = req.getQuery('version') ?? '';
    const codec = req.getQuery('codec') ?? '';
    let refuse: SessionData['refuse'] = null;
    if (!CODECS.includes(codec as CodecName)) {
      refuse = { code: CloseCode.badCodec, reason: `codec must be json or msgpack (got '${codec}')` };
    } else {
      const problem = checkClientVersion(this.host.flags, version);
      if (problem !== null) refuse = { code: CloseCode.versionRefused, reason: problem };
    }
    const data: SessionData = { id: 0, codec: (refuse ? 'json' : codec) as CodecName, version, refuse, open: false, ws: null };
    res.upgrade(data, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'), context);
  }

  private open(ws: Socket): void {
    const d = ws.getUserData();
    ws.session = d;
    if (d.refuse) {
      this.stats.refused++;
      this.host.log.vlog(1, `session refused: close_code=${d.refuse.code}, ${d.refuse.reason}`);
      ws.end(d.refuse.code, closeReason(d.refuse.reason));
      return;
    }
    d.id = withCodecBit(randomTag(), d.codec);
    d.open = true;
    d.ws = ws;
    this.sessions.set(d.id, d);
    this.stats.opened++;
    this.publishCount();
    if (this.handlers.opened.length > 0) {
      const info: SessionOpenedInfo = {
        sessionId: d.id, version: d.version, codec: d.codec, address: Buffer.from(ws.getRemoteAddressAsText()).toString(),
      };
      this.pushEngine(OPENED_EVENT, d.id, info);
    }
    if (this.maintenanceFrame) this.sendFrame(ws, d, this.maintenanceFrame(d.codec));
  }

  private message(ws: Socket, message: ArrayBuffer, isBinary: boolean): void {
    const d = ws.session;
    if (d === undefined || !d.open) return;
    this.stats.messages++;
    if (this.maintenanceFrame !== null) {
      this.stats.droppedInMaintenance++;
      native.counterIncrease('engine', 'maintenance_dropped_messages', 1);
      this.host.log.vlog(1, `maintenance: dropped a message from session ${d.id} (${message.byteLength} bytes)`);
      return;
    }
    const length = message.byteLength;
    if (length > this.options.maxMessageBytes) {
      this.protocolError(ws, d, { code: ProtocolError.tooBig, message: `message of ${length} bytes exceeds the limit of ${this.options.maxMessageBytes} bytes` });
      return;
    }
    if (isBinary !== (d.codec === 'msgpack')) {
      this.protocolError(ws, d, {
        code: ProtocolError.wrongFrame,
        message: `${isBinary ? 'binary' : 'text'} frame on a ${d.codec} session (json uses text frames, msgpack binary frames)`,
      });
      return;
    }
    const bytes = new Uint8Array(message);
    if (this.logLevel > 0) logSessionMessage(this.host.log, this.logLevel, 'in', d.id, bytes, isBinary);
    const span = peekTypeSpan(bytes, isBinary);
    let nameId = this.messageNameId;
    if (span < 0 && this.handlers.messages.size === 0) {
      this.answerWithoutWorker(ws, d, bytes);
      return;
    }
    if (span >= 0) {
      const start = span % TYPE_SPAN;
      const end = Math.floor(span / TYPE_SPAN);
      if (this.isLastType(bytes, start, end)) {
        nameId = this.lastTypeId;
      } else {
        const type = typeText(bytes, start, end);
        nameId = this.typeIds.get(type) ?? this.learnType(type);
        if (nameId < 0) {
          this.unknownType(ws, d, bytes, type);
          return;
        }
        this.lastType = bytes.slice(start, end);
        this.lastTypeId = nameId;
      }
    }
    this.stage.add(d.id, nameId, bytes);
  }

  private isLastType(bytes: Uint8Array, start: number, end: number): boolean {
    const last = this.lastType;
    if (end - start !== last.length) return false;
    for (let i = 0; i < last.length; i++) if (bytes[start + i] !== last[i]) return false;
    return true;
  }

  private learnType(type: string): number {
    const id = !type.startsWith('_') && this.handlers.messages.has(type) ? intern(type) : -1;
    // Handled types are few; unknown ones come from clients and are remembered only up to a bound.
    if (id >= 0 || this.typeIds.size < MAX_REMEMBERED_TYPES) this.typeIds.set(type, id);
    return id;
  }

  private unknownType(ws: Socket, d: SessionData, bytes: Uint8Array, type: string): void {
    let id: number | undefined;
    try {
      id = decodeFrame(bytes, d.codec).id;
    } catch {
      id = undefined; // the error frame for the unknown type is what the client needs first
    }
    this.protocolError(ws, d, { code: ProtocolError.unknownType, message: `no handler for message type '${type}'`, type }, id);
  }

  /** No plugin handles any message type: every frame gets its error frame from here. */
  private answerWithoutWorker(ws: Socket, d: SessionData, bytes: Uint8Array): void {
    try {
      const { type, id } = decodeFrame(bytes, d.codec);
      this.protocolError(ws, d, { code: ProtocolError.unknownType, message: `no handler for message type '${type}'`, type }, id);
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
      const body: ProtocolErrorBody = { code: err.code, message: err.message };
      if (err.type !== undefined) body.type = err.type;
      this.protocolError(ws, d, body);
    }
  }

  private protocolError(ws: Socket, d: SessionData, body: ProtocolErrorBody, id?: number): void {
    this.stats.protocolErrors++;
    this.sendFrame(ws, d, encodeFrame(d.codec, EngineType.error, body, id));
  }

  private closed(ws: Socket, code: number, message: ArrayBuffer): void {
    const d = ws.getUserData();
    d.ws = null; // uWS frees the socket after this callback
    if (!d.open) return;
    d.open = false;
    this.sessions.delete(d.id);
    this.stats.closed++;
    this.publishCount();
    const account = this.onSessionClosed(d.id);
    if (this.handlers.closed.length > 0) {
      const info: SessionClosedInfo = { sessionId: d.id, code, reason: Buffer.from(message).toString('utf8'), account };
      this.pushEngine(CLOSED_EVENT, d.id, info);
    }
  }

  /** Queues an engine event on the session tag (also while the server drains at stop). */
  private pushEngine(event: string, sessionId: number, payload: unknown): void {
    const id = intern(event);
    this.stage.flush();
    native.push(sessionId, intern(event === OPENED_EVENT ? '_session_opened' : '_session_closed'), id, sessionId,
      EventKind.engine, encodePayload(payload));
  }

  private publishCount(): void {
    native.counterUpdate('engine', 'sessions', this.sessions.size, false, 'Connected client sessions');
  }

  /** Writes one frame, then closes the session if its send buffer passed the limit. */
  private sendFrame(ws: Socket, d: SessionData, frame: string | Uint8Array): void {
    const binary = d.codec === 'msgpack';
    if (this.logLevel > 0) logSessionMessage(this.host.log, this.logLevel, 'out', d.id, frame, binary);
    // 1: written with nothing left buffered; otherwise look at how much is waiting.
    if (ws.send(frame, binary) !== 1 && ws.getBufferedAmount() > this.options.maxBackpressureBytes && d.open) {
      this.stats.backpressureCloses++;
      this.host.log.warn(`session ${d.id} closed: send buffer of ${ws.getBufferedAmount()} bytes passed max_backpressure_bytes`);
      d.open = false;
      this.sessions.delete(d.id);
      this.publishCount();
      const account = this.onSessionClosed(d.id);
      ws.end(CloseCode.backpressure, 'send buffer limit exceeded');
      if (this.handlers.closed.length > 0) {
        this.pushEngine(CLOSED_EVENT, d.id, { sessionId: d.id, code: CloseCode.backpressure, reason: 'send buffer limit exceeded', account });
      }
    }
  }

  /**
   * Writes one frame to a session by id; false if it is not connected. One frame needs no
   * cork: uncorked, uWS writes it at once, in the one write a cork would have made.
   */
  send(sessionId: number, frame: string | Uint8Array): boolean {
    const d = this.sessions.get(sessionId);
    if (d === undefined) return false;
    this.sendFrame(d.ws!, d, frame);
    return true;
  }

  /** Writes the frames of a run of sends (`Op` records at `start`, `start + 3`, … before `end`) under one cork. */
  sendRun(sessionId: number, ops: unknown[], start: number, end: number): void {
    const d = this.sessions.get(sessionId);
    if (d === undefined) return;
    const ws = d.ws!;
    ws.cork(() => {
      for (let i = start; i < end && d.open; i += 3) this.sendFrame(ws, d, ops[i + 2] as string | Uint8Array);
    });
  }

  /** See `OpTarget.sendTextRun`: one frame is written as is, more under one cork. */
  sendTextRun(sessionId: number, ops: unknown[], start: number, end: number, text: string, pos: number): number {
    const d = this.sessions.get(sessionId);
    let p = pos;
    if (d === undefined) {
      for (let i = start; i < end; i += 3) p += ops[i + 2] as number;
      return p;
    }
    const ws = d.ws!;
    if (end - start === 3) {
      const length = ops[start + 2] as number;
      this.sendFrame(ws, d, text.substring(p, p + length));
      return p + length;
    }
    ws.cork(() => {
      for (let i = start; i < end; i += 3) {
        const length = ops[i + 2] as number;
        if (d.open) this.sendFrame(ws, d, text.substring(p, p + length));
        p += length;
      }
    });
    return p;
  }

  /** Closes a session by id with `code` and `reason`; false if it is not connected. */
  end(sessionId: number, code: number, reason: string): boolean {
    const d = this.sessions.get(sessionId);
    if (d === undefined) return false;
    d.ws!.end(code, closeReason(reason));
    return true;
  }

  /** Sends a per-codec frame to every session. */
  sendAll(frameOf: (codec: CodecName) => string | Uint8Array): void {
    const frames: Partial<Record<CodecName, string | Uint8Array>> = {};
    for (const d of this.sessions.values()) {
      const ws = d.ws!;
      const frame = frames[d.codec] ??= frameOf(d.codec);
      this.sendFrame(ws, d, frame);
    }
  }

  /** Applies operations built by `ops.ts` (from a worker's batch or from the main thread). */
  applyOps(ops: unknown[], text?: string): void {
    applyOps(this, ops, text);
  }

  /** Subscribes or unsubscribes a session to a group (topics are per codec). */
  group(sessionId: number, group: string, join: boolean): void {
    const d = this.sessions.get(sessionId);
    if (!d) return;
    const topic = `${d.codec}:${group}`;
    if (join) d.ws!.subscribe(topic);
    else d.ws!.unsubscribe(topic);
  }

  /** Writes one message to every member of a group: each codec's members get their encoding. */
  publish(group: string, json: string | Uint8Array, msgpack: string | Uint8Array): void {
    if (this.logLevel > 0) this.host.log.info(`session publish: group=${group}`);
    this.app.publish(`json:${group}`, json, false);
    this.app.publish(`msgpack:${group}`, msgpack, true);
  }
}
