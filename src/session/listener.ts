/**
 * The session listener (component `SessionService`) on uWebSockets.js: on the main thread, or
 * one on each I/O thread (`io_threads_size` > 1, `io/thread.ts`; the main thread then routes
 * through `main/io-sessions.ts`).
 *
 * Per message the listener's thread does little: the maintenance gate, the size and frame-kind
 * checks, a peek at the type of canonical frames (to name the event and refuse unknown types),
 * and a copy of the raw bytes into the push stage, which queues the turn's messages as network
 * events on their sessions' tags in one native call (`push-stage.ts`). A refused frame's error
 * frame is queued the same way (`_session.refused`), so it leaves after the replies to the
 * session's earlier messages, not before them.
 * Decoding, handlers and encoding run on event workers (`message-event.ts`); their outbound
 * operations come back through the workers' rings (`main/outbound-reader.ts`) and are written
 * to the sockets here.
 *
 * Every frame a session is sent, a reply, a send, a broadcast or a group publish, passes the
 * same check: past `max_backpressure_bytes` of unsent data the session is closed with 4008.
 *
 * A session's upgrade, open and close are in `listener-lifecycle.ts`; the error frames the
 * listener answers without an event worker in `listener-errors.ts`.
 */
import uWS from 'uWebSockets.js';
import { listenUws, type Listening } from '../api/main/listen.ts';
import { native } from '../native.ts';
import { intern } from '../events/runtime.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';
import type { IoRole } from './io/io-role.ts';
import { encodeFrame, peekTypeSpan, trailingId, TYPE_SPAN } from './codec.ts';
import { logSessionMessage } from './message-log.ts';
import { MESSAGE_EVENT, REFUSED_EVENT } from './worker/message-event.ts';
import type { LocalSessions } from './main/local-sessions.ts';
import type { HandlerView, RemoteSessions, SessionServiceOptions, SessionStats } from './listener-types.ts';
import { PushStage } from './push-stage.ts';
import { SessionGroups } from './groups.ts';
import { MessageTypes } from './message-types.ts';
import { closeReason, CloseCode, EngineType, ProtocolError, protocolErrorBody, type CodecName, type ProtocolErrorBody } from './protocol.ts';
import { SessionLifecycle, type SessionData, type Socket } from './listener-lifecycle.ts';
import { answerWithoutWorker, unknownTypeAnswer } from './listener-errors.ts';

// A local copy: module exports are getters under the CommonJS transform (read per message).
const SPAN = TYPE_SPAN;
const encoder = new TextEncoder();

/** Why a frame was not sent (counter `engine/dropped_sends_<reason>`). */
type DropReason = 'no_session' | 'backpressure';

export class SessionListener implements LocalSessions {
  readonly stats: SessionStats;
  private readonly app = uWS.App();
  private readonly sessions = new Map<number, SessionData>();
  /** Members of each group (sessions join and leave through plugin code). */
  private readonly groups = new SessionGroups<SessionData>((group, hasMembers) => this.remote?.groupChanged(group, hasMembers));
  private listening: Listening | null = null;
  private readonly messageHandlerId: number;
  private readonly stage: PushStage;
  private readonly messageNameId: number;
  private readonly refusedNameId: number;
  /** Upgrades, opens and closes (`listener-lifecycle.ts`). */
  private readonly lifecycle: SessionLifecycle;
  /** The event name id of each message type plugins handle. */
  readonly types: MessageTypes;
  /**
   * Whether a refused frame's error is queued on the session's tag: from the first time plugins
   * handle a message type here on. Before that no handler of a session can be running, and the
   * error goes straight out; after a reload removes the last type, one may still be awaiting
   * (on a retired event thread) and owe the session a reply that must go first.
   */
  private refusalsQueued: boolean;
  private logLevel: number;
  /** Maintenance gate, set by the maintenance feature; null: off. */
  maintenanceFrame: ((codec: CodecName) => string | Uint8Array) | null = null;

  /** See `LocalSessions.setMaintenance` (on this thread, the gate and the announcement are one step). */
  setMaintenance(gate: ((codec: CodecName) => string | Uint8Array) | null, announce: ((codec: CodecName) => string | Uint8Array) | null): void {
    this.maintenanceFrame = gate;
    if (announce !== null) this.sendAll(announce);
  }
  /** Called after a session closed (the account manager logs it out); returns its account. */
  onSessionClosed: (sessionId: number) => string | null = () => null;
  /** Set by the Cluster component; null: every session is on this server. */
  remote: RemoteSessions | null = null;

  /**
   * `io`: this listener runs on an I/O thread (`SessionService.io_threads_size` > 1), which owns
   * the sockets it accepts; the main thread keeps accounts, groups and the cluster for them.
   */
  constructor(private readonly thread: Pick<ThreadContext, 'flags' | 'log'>, private readonly handlers: HandlerView,
    private readonly options: SessionServiceOptions, private readonly io: IoRole | null = null) {
    this.stats = io?.stats ?? {
      opened: 0, closed: 0, refused: 0, messages: 0, protocolErrors: 0, droppedInMaintenance: 0, backpressureCloses: 0,
      droppedNoSession: 0, droppedBackpressure: 0,
    };
    this.types = new MessageTypes((type) => this.handlers.messages.has(type));
    this.refusalsQueued = handlers.messages.size > 0;
    this.messageHandlerId = intern(MESSAGE_EVENT);
    this.messageNameId = intern(MESSAGE_EVENT);
    this.refusedNameId = intern(REFUSED_EVENT);
    this.stage = new PushStage(this.messageHandlerId);
    this.lifecycle = new SessionLifecycle({
      thread, handlers, io, stats: this.stats, sessions: this.sessions, groups: this.groups, stage: this.stage,
      sendFrame: (ws, d, frame, binary) => this.sendFrame(ws, d, frame, binary), hooks: this,
    });
    this.logLevel = thread.flags.get<number>('session_message_logging_level');
    thread.flags.onChange('session_message_logging_level', (_n, v) => { this.logLevel = v as number; });
    const hardLimit = options.maxMessageBytes * 4 + 1024;
    this.app.ws<SessionData>('/*', {
      maxPayloadLength: hardLimit,
      idleTimeout: options.idleTimeoutSec,
      sendPingsAutomatically: options.sendPings,
      maxBackpressure: options.maxBackpressureBytes * 2 + hardLimit,
      upgrade: (res, req, context) => this.lifecycle.upgrade(res, req, context),
      open: (ws) => this.lifecycle.open(ws),
      message: (ws, message, isBinary) => this.message(ws, message, isBinary),
      close: (ws, code, message) => this.lifecycle.closed(ws, code, message),
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

  async listen(port = this.options.port): Promise<number> {
    this.listening = await listenUws(this.app, this.options.address, port, 'SessionService', this.io !== null);
    return this.listening.port;
  }

  /** Stops listening and closes every session with 1001. */
  shutdown(): void {
    this.listening?.close();
    this.stage.flush();
    for (const d of [...this.sessions.values()]) d.ws!.end(CloseCode.goingAway, 'server stopping');
  }

  private message(ws: Socket, message: ArrayBuffer, isBinary: boolean): void {
    const d = ws.session;
    if (d === undefined || !d.open) return;
    this.stats.messages++;
    // On an I/O thread, the flags are re-read once per event-loop turn (the first message staged).
    if (this.io !== null && this.stage.empty) this.io.refresh();
    if (this.maintenanceFrame !== null) {
      this.stats.droppedInMaintenance++;
      native.counterIncrease('engine', 'maintenance_dropped_messages', 1);
      this.thread.log.vlog(1, `maintenance: dropped a message from session ${d.id} (${message.byteLength} bytes)`);
      return;
    }
    const length = message.byteLength;
    if (length > this.options.maxMessageBytes) {
      this.refuse(ws, d, protocolErrorBody(ProtocolError.tooBig, [length, this.options.maxMessageBytes]), trailingId(new Uint8Array(message), isBinary));
      return;
    }
    if (isBinary !== (d.codec === 'msgpack')) {
      this.refuse(ws, d, {
        code: ProtocolError.wrongFrame,
        message: `${isBinary ? 'binary' : 'text'} frame on a ${d.codec} session (json uses text frames, msgpack binary frames)`,
      });
      return;
    }
    const bytes = new Uint8Array(message);
    if (this.logLevel > 0) logSessionMessage(this.thread.log, this.logLevel, 'in', d.id, bytes, isBinary);
    const span = peekTypeSpan(bytes, isBinary);
    let nameId = this.messageNameId;
    if (span < 0 && this.handlers.messages.size === 0) {
      const { body, id } = answerWithoutWorker(bytes, d.codec);
      this.refuse(ws, d, body, id);
      return;
    }
    if (span >= 0) {
      nameId = this.types.idOf(bytes, span % SPAN, Math.floor(span / SPAN));
      if (nameId < 0) {
        this.unknownType(ws, d, bytes, this.types.unknown);
        return;
      }
    }
    this.stage.add(d.id, nameId, bytes);
  }

  private unknownType(ws: Socket, d: SessionData, bytes: Uint8Array, type: string): void {
    const { body, id } = unknownTypeAnswer(bytes, d.codec, type);
    this.refuse(ws, d, body, id);
  }

  /** The plugins' handled message types changed (a reload): types are looked up afresh. */
  typesChanged(): void {
    this.types.forget();
    if (this.handlers.messages.size > 0) this.refusalsQueued = true;
  }

  /**
   * Answers a frame this thread refuses. Once plugins have handled message types, the error
   * frame is queued as an event on the session's tag, which only sends it: the session's earlier
   * messages may still be running (an awaiting handler), and their replies go first.
   */
  private refuse(ws: Socket, d: SessionData, body: ProtocolErrorBody, id?: number): void {
    if (!this.refusalsQueued) {
      this.protocolError(ws, d, body, id);
      return;
    }
    this.stats.protocolErrors++;
    const frame = encodeFrame(d.codec, EngineType.error, body, id);
    this.stage.add(d.id, this.refusedNameId, typeof frame === 'string' ? encoder.encode(frame) : frame);
  }

  private protocolError(ws: Socket, d: SessionData, body: ProtocolErrorBody, id?: number): void {
    this.stats.protocolErrors++;
    this.sendFrame(ws, d, encodeFrame(d.codec, EngineType.error, body, id), d.codec === 'msgpack');
  }

  /** Ends a session's bookkeeping (`SessionLifecycle.close`); the caller ends the socket. */
  private closeSession(d: SessionData, code: number, reason: string): void {
    this.lifecycle.close(d, code, reason);
  }

  private dropped(reason: DropReason, count = 1): void {
    if (reason === 'no_session') this.stats.droppedNoSession += count;
    else this.stats.droppedBackpressure += count;
    native.counterIncrease('engine', `dropped_sends_${reason}`, count);
  }

  /**
   * Writes one frame, then closes the session if its send buffer passed the limit: a client
   * that stops reading is closed with 4008 and a log line, whatever the frame was.
   */
  private sendFrame(ws: Socket, d: SessionData, frame: string | Uint8Array, binary: boolean): void {
    if (!d.open) {
      this.dropped('backpressure');
      return;
    }
    if (this.logLevel > 0) logSessionMessage(this.thread.log, this.logLevel, 'out', d.id, frame, binary);
    // 1: written with nothing left buffered; otherwise look at how much is waiting.
    if (ws.send(frame, binary) !== 1 && ws.getBufferedAmount() > this.options.maxBackpressureBytes) {
      this.stats.backpressureCloses++;
      // The frame that passed the limit, like everything still buffered, never reaches the client.
      this.dropped('backpressure');
      this.thread.log.warn(`session ${d.id} closed (4008): send buffer of ${ws.getBufferedAmount()} bytes passed max_backpressure_bytes`);
      this.closeSession(d, CloseCode.backpressure, 'send buffer limit exceeded');
      ws.end(CloseCode.backpressure, 'send buffer limit exceeded');
    }
  }

  /** Writes one frame to a session by id (on another server with the Cluster component); false if it is not connected here. */
  send(sessionId: number, frame: string | Uint8Array): boolean {
    const d = this.sessions.get(sessionId);
    if (d === undefined) {
      if (this.remote !== null) this.remote.send(sessionId, frame);
      else this.dropped('no_session');
      return false;
    }
    this.sendFrame(d.ws!, d, frame, d.codec === 'msgpack');
    return true;
  }

  /** Writes frames another server sent to a session of this one, under one cork; false if it is not connected. */
  deliver(sessionId: number, frames: readonly Uint8Array[]): boolean {
    const d = this.sessions.get(sessionId);
    if (d === undefined) {
      this.dropped('no_session', frames.length);
      return false;
    }
    const ws = d.ws!;
    const binary = d.codec === 'msgpack';
    if (frames.length === 1) this.sendFrame(ws, d, frames[0]!, binary);
    else ws.cork(() => { for (const f of frames) this.sendFrame(ws, d, f, binary); });
    return true;
  }

  /** See `OutboundTarget.sendOne`: a frame written as is (uWS corks a send made outside a cork itself). */
  sendOne(sessionId: number, frame: Uint8Array, binary: boolean): void {
    const d = this.sessions.get(sessionId);
    if (d !== undefined) this.sendFrame(d.ws!, d, frame, binary);
    else if (this.remote !== null) this.remote.send(sessionId, frame);
    else this.dropped('no_session');
  }

  /** See `OutboundTarget.sendRun`: the frames under one cork. */
  sendRun(sessionId: number, frames: (write: (frame: Uint8Array, binary: boolean) => void) => void): void {
    const d = this.sessions.get(sessionId);
    if (d === undefined) {
      const remote = this.remote;
      if (remote !== null) frames((frame) => remote.send(sessionId, frame));
      else frames(() => this.dropped('no_session'));
      return;
    }
    const ws = d.ws!;
    ws.cork(() => frames((frame, binary) => this.sendFrame(ws, d, frame, binary)));
  }

  error(message: string): void {
    this.thread.log.error(message);
  }

  /** Closes a session by id with `code` and `reason`; false if it is not connected. */
  end(sessionId: number, code: number, reason: string): boolean {
    const d = this.sessions.get(sessionId);
    if (d === undefined) return false;
    d.ws!.end(code, closeReason(reason));
    return true;
  }

  /** `OutboundTarget.close`: a plugin closes a session (on whichever server holds it). */
  close(sessionId: number, code: number, reason: string): void {
    if (!this.end(sessionId, code, reason)) this.remote?.close(sessionId, code, reason);
  }

  /** Sends a per-codec frame to every session. */
  sendAll(frameOf: (codec: CodecName) => string | Uint8Array): void {
    const frames: Partial<Record<CodecName, string | Uint8Array>> = {};
    for (const d of [...this.sessions.values()]) {
      const frame = frames[d.codec] ??= frameOf(d.codec);
      this.sendFrame(d.ws!, d, frame, d.codec === 'msgpack');
    }
  }

  /** One message to many sessions (null: every session), each in its codec's encoding. */
  broadcast(sessionIds: readonly number[] | null, json: Uint8Array, msgpack: Uint8Array, members = false): void {
    if (sessionIds === null) {
      this.sendAll((codec) => (codec === 'json' ? json : msgpack));
      this.remote?.broadcastAll(json, msgpack);
      return;
    }
    for (const id of sessionIds) {
      const d = this.sessions.get(id);
      if (d === undefined) {
        // A group's member (an I/O thread's publish) that closed here since had left the group
        // by then, as with one thread, where the publish would not have named it.
        if (members) continue;
        // The session id's low bit is its codec (1: msgpack).
        if (this.remote !== null) this.remote.send(id, id % 2 === 1 ? msgpack : json);
        else this.dropped('no_session');
      } else this.sendFrame(d.ws!, d, d.codec === 'json' ? json : msgpack, d.codec === 'msgpack');
    }
  }

  /** Adds a session to a group or removes it (on whichever server holds it). */
  group(sessionId: number, group: string, join: boolean): void {
    const d = this.sessions.get(sessionId);
    if (d === undefined) this.remote?.group(sessionId, group, join);
    else this.groups.set(d, group, join);
  }

  /** Adds a session of this server to a group or removes it (another server asked); false if it is not here. */
  groupLocal(sessionId: number, group: string, join: boolean): boolean {
    const d = this.sessions.get(sessionId);
    if (d === undefined) return false;
    this.groups.set(d, group, join);
    return true;
  }

  /** Groups with members on this server. */
  groupNames(): string[] {
    return this.groups.names();
  }

  /**
   * Writes one message to every member of a group, each in its codec's encoding, with the
   * same backpressure rule as any other frame; with the Cluster component, to the members on
   * other servers too.
   */
  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void {
    this.publishLocal(group, json, msgpack);
    this.remote?.publish(group, json, msgpack);
  }

  /** Writes one message to this server's members of a group. */
  publishLocal(group: string, json: Uint8Array, msgpack: Uint8Array): void {
    const members = this.groups.of(group);
    if (this.logLevel > 0) this.thread.log.info(`session publish: group=${group}, members=${members.length}`);
    for (const d of members) this.sendFrame(d.ws!, d, d.codec === 'json' ? json : msgpack, d.codec === 'msgpack');
  }

  /** Members of a group now (tests and diagnostics). */
  groupSize(group: string): number {
    return this.groups.size(group);
  }
}
