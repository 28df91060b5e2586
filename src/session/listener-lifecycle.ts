/**
 * A session's start and end on the session listener (`listener.ts`), on the listener's thread:
 * the upgrade (codec and client-version checks), the open (its id, the session count, the
 * opened event, the maintenance frame) and the close (the session table and groups, its
 * account, the closed event). On an I/O thread the main thread hears of opens and closes and
 * does their bookkeeping (`IoRole`).
 *
 * None of it runs per message: the listener keeps the message and send paths.
 */
import type uWS from 'uWebSockets.js';
import { native } from '../native.ts';
import { randomTag } from '../events/tags.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';
import type { IoRole } from './io/io-role.ts';
import { withCodecBit } from './codec.ts';
import { CLOSED_EVENT, OPENED_EVENT } from './worker/message-event.ts';
import type { HandlerView, RemoteSessions, SessionStats } from './listener-types.ts';
import { pushEngineEvent, type PushStage } from './push-stage.ts';
import type { SessionGroups } from './groups.ts';
import { closeReason, CODECS, CloseCode, type CodecName } from './protocol.ts';
import { checkClientVersion } from './version-gate.ts';
import type { SessionClosedInfo, SessionOpenedInfo } from './types.ts';

export interface SessionData {
  id: number;
  codec: CodecName;
  version: string;
  /** Set when the upgrade is refused: the socket is closed with it as soon as it opens. */
  refuse: { code: number; reason: string } | null;
  open: boolean;
  /** The socket, once open (saves a native `getUserData` per outbound frame). */
  ws: Socket | null;
  /** Groups the session is in. */
  groups: Set<string> | null;
}

/**
 * uWS hands every callback of a connection the same socket object: the session data is also
 * kept on it as a plain property, read per message without a native `getUserData` call.
 */
export type Socket = uWS.WebSocket<SessionData> & { session?: SessionData };

/** The listener's frame writer (`SessionListener.sendFrame`: the backpressure rule included). */
export type SendFrame = (ws: Socket, d: SessionData, frame: string | Uint8Array, binary: boolean) => void;

/** What other components set on the listener while it runs (read where used, never copied). */
export interface ListenerHooks {
  readonly maintenanceFrame: ((codec: CodecName) => string | Uint8Array) | null;
  onSessionClosed(sessionId: number): string | null;
  readonly remote: RemoteSessions | null;
}

/** What the lifecycle shares with its listener. */
export interface LifecycleParts {
  readonly thread: Pick<ThreadContext, 'flags' | 'log'>;
  readonly handlers: HandlerView;
  readonly io: IoRole | null;
  readonly stats: SessionStats;
  /** The listener's session table. */
  readonly sessions: Map<number, SessionData>;
  readonly groups: SessionGroups<SessionData>;
  readonly stage: PushStage;
  readonly sendFrame: SendFrame;
  /** The listener itself. */
  readonly hooks: ListenerHooks;
}

export class SessionLifecycle {
  constructor(private readonly parts: LifecycleParts) {}

  /** uWS: a client asks to connect; the codec and its version are checked (a refusal is sent once it opens). */
  upgrade(res: uWS.HttpResponse, req: uWS.HttpRequest, context: uWS.us_socket_context_t): void {
    this.parts.io?.refresh();
    const version = req.getQuery('version') ?? '';
    const codec = req.getQuery('codec') ?? '';
    let refuse: SessionData['refuse'] = null;
    if (!CODECS.includes(codec as CodecName)) {
      refuse = { code: CloseCode.badCodec, reason: `codec must be json or msgpack (got '${codec}')` };
    } else {
      const problem = checkClientVersion(this.parts.thread.flags, version);
      if (problem !== null) refuse = { code: CloseCode.versionRefused, reason: problem };
    }
    const data: SessionData = { id: 0, codec: (refuse ? 'json' : codec) as CodecName, version, refuse, open: false, ws: null, groups: null };
    res.upgrade(data, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'), context);
  }

  /** uWS: the connection is open; a refused one is closed at once. */
  open(ws: Socket): void {
    const { stats, thread, io, hooks } = this.parts;
    const d = ws.getUserData();
    ws.session = d;
    if (d.refuse) {
      stats.refused++;
      thread.log.vlog(1, `session refused: close_code=${d.refuse.code}, ${d.refuse.reason}`);
      ws.end(d.refuse.code, closeReason(d.refuse.reason));
      return;
    }
    d.id = io !== null ? io.sessionId(d.codec) : withCodecBit(randomTag(), d.codec);
    d.open = true;
    d.ws = ws;
    this.parts.sessions.set(d.id, d);
    stats.opened++;
    if (io !== null) {
      // Counted here, so a client that sees its connection open sees it counted; the main
      // thread hears of it before its first event can run (a handler may log it in).
      native.counterIncrease('engine', 'sessions', 1);
      io.opened(d.id);
    } else {
      this.publishCount();
    }
    hooks.remote?.opened(d.id);
    if (this.parts.handlers.opened.length > 0) {
      const info: SessionOpenedInfo = {
        sessionId: d.id, version: d.version, codec: d.codec, address: Buffer.from(ws.getRemoteAddressAsText()).toString(),
      };
      this.pushEngine(OPENED_EVENT, d.id, info);
    }
    if (hooks.maintenanceFrame) this.parts.sendFrame(ws, d, hooks.maintenanceFrame(d.codec), d.codec === 'msgpack');
  }

  /** uWS: the connection is gone (closed by either side, or dropped). */
  closed(ws: Socket, code: number, message: ArrayBuffer): void {
    const d = ws.getUserData();
    d.ws = null; // uWS frees the socket after this callback
    this.close(d, code, Buffer.from(message).toString('utf8'));
  }

  /**
   * The one place a session's bookkeeping ends: it leaves the session table and its groups,
   * its account is logged out and the session-closed handlers are queued. The socket itself
   * is ended by the caller (or is already gone).
   */
  close(d: SessionData, code: number, reason: string): void {
    if (!d.open) return;
    const { stats, io, hooks } = this.parts;
    d.open = false;
    this.parts.sessions.delete(d.id);
    stats.closed++;
    if (io !== null) {
      // Its messages are queued first; the main thread logs it out and queues the closed event.
      this.parts.stage.flush();
      native.counterDecrease('engine', 'sessions', 1);
      io.closed(d.id, code, reason);
      return;
    }
    this.parts.groups.leaveAll(d);
    this.publishCount();
    const account = hooks.onSessionClosed(d.id);
    hooks.remote?.closed(d.id);
    if (this.parts.handlers.closed.length > 0) {
      const info: SessionClosedInfo = { sessionId: d.id, code, reason, account };
      this.pushEngine(CLOSED_EVENT, d.id, info);
    }
  }

  /** Queues an engine event on the session tag (also while the server drains at stop). */
  private pushEngine(event: string, sessionId: number, payload: unknown): void {
    this.parts.stage.flush();
    pushEngineEvent(event, sessionId, payload);
  }

  private publishCount(): void {
    native.counterUpdate('engine', 'sessions', this.parts.sessions.size, false, 'Connected client sessions');
  }
}
