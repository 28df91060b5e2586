/**
 * What plugins see of sessions and accounts: handler shapes and the `api.sessions` /
 * `api.accounts` objects (`src/plugins/types.ts` puts them on `PluginApi`).
 */
import type { EventContext } from '../events/types.ts';
import type { CodecName } from './protocol.ts';

/** The message a handler receives besides its body. */
export interface SessionMessage {
  readonly sessionId: number;
  readonly type: string;
  /** The client's request id, if it set one (the reply carries it back). */
  readonly id: number | undefined;
  /** Answers this message: same type unless `type` is given, same request id. */
  reply(body?: unknown, type?: string): void;
}

/** Handles one client message type; runs as a network event on the session's tag. */
export type MessageHandler<B = unknown> = (body: B, message: SessionMessage, ctx: EventContext) => void | Promise<void>;

/** What a session-opened handler receives. */
export interface SessionOpenedInfo {
  sessionId: number;
  /** The client version from the URL. */
  version: string;
  codec: CodecName;
  /** The client's address as text. */
  address: string;
}

/** What a session-closed handler receives. */
export interface SessionClosedInfo {
  sessionId: number;
  /** The WebSocket close code (see `CloseCode`; 1000/1001/1005/1006 from clients and networks). */
  code: number;
  reason: string;
  /** The account the session was logged in as when it closed, or null. */
  account: string | null;
}

export type SessionHandler<I> = (info: I, ctx: EventContext) => void | Promise<void>;

export interface SessionApi {
  /** Handles client messages of `type` (one plugin per type; types starting with `_` are reserved). */
  onMessage<B = unknown>(type: string, handler: MessageHandler<B>): void;
  /** Runs when a session opens, before any of its messages (an event on the session tag). */
  onOpen(handler: SessionHandler<SessionOpenedInfo>): void;
  /** Runs when a session has closed, after its last message (an event on the session tag). */
  onClose(handler: SessionHandler<SessionClosedInfo>): void;
  /** Sends a message to one session; unknown or closed sessions are skipped. */
  send(sessionId: number, type: string, body?: unknown): void;
  /** Sends one message to many sessions, or to every session with 'all'. */
  broadcast(sessionIds: readonly number[] | 'all', type: string, body?: unknown): void;
  /** Closes a session with close code 4010 and `reason` (at most 123 bytes are sent). */
  close(sessionId: number, reason?: string): void;
  /** Adds a session to a named group (a chat room, a match); it leaves all groups when it closes. */
  join(sessionId: number, group: string): void;
  /** Removes a session from a group. */
  leave(sessionId: number, group: string): void;
  /** Sends one message to every session in a group (uWebSockets.js publish: one write per member). */
  publish(group: string, type: string, body?: unknown): void;
}

/** Outcome of `accounts.login`. */
export type LoginResult =
  | { ok: true; /** The session the account was logged in on before, now closed with 4009. */ replaced: number | null }
  | { ok: false; reason: 'already_logged_in'; sessionId: number }
  | { ok: false; reason: 'no_session' };

/**
 * The account manager: one session per account. Calls from event workers are answered by the
 * main thread; await them (inside events, `ctx.io(...)` counts the wait as io-wait).
 */
export interface AccountApi {
  /** Binds `accountId` to a session (the running event's session when omitted). */
  login(accountId: string, sessionId?: number): Promise<LoginResult>;
  /** Unbinds an account; false if it was not logged in. */
  logout(accountId: string): Promise<boolean>;
  /** The session an account is logged in on, or null. */
  locate(accountId: string): Promise<number | null>;
  isLoggedIn(accountId: string): Promise<boolean>;
  /** The account a session is logged in as, or null. */
  accountOf(sessionId: number): Promise<string | null>;
}
