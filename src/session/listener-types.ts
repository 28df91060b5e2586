/**
 * What the session listener (`listener.ts`) is given and exposes, shared by the main thread's
 * router to I/O threads (`main/io-sessions.ts`), the I/O threads and the cluster.
 */

export interface SessionServiceOptions {
  address: string;
  port: number;
  maxMessageBytes: number;
  maxBackpressureBytes: number;
  idleTimeoutSec: number;
  sendPings: boolean;
}

/** What the listener asks of plugins' session handlers: which message types, and whether anyone hears opens and closes. */
export interface HandlerView {
  readonly messages: { has(type: string): boolean; readonly size: number };
  readonly opened: { readonly length: number };
  readonly closed: { readonly length: number };
}

/** Counts for tests and diagnostics. */
export interface SessionStats {
  opened: number;
  closed: number;
  refused: number;
  messages: number;
  protocolErrors: number;
  droppedInMaintenance: number;
  backpressureCloses: number;
  /** Frames not sent: the session had closed (or never existed). */
  droppedNoSession: number;
  /** Frames not sent: the session was closed for backpressure by this or an earlier frame. */
  droppedBackpressure: number;
}

/**
 * Where operations for sessions this server does not hold go when the `Cluster` component
 * runs (`src/cluster/`); it also hears which sessions and groups this server has.
 */
export interface RemoteSessions {
  /** A frame for a session this server does not hold (another server may). */
  send(sessionId: number, frame: Uint8Array | string): void;
  close(sessionId: number, code: number, reason: string): void;
  group(sessionId: number, group: string, join: boolean): void;
  /** A publish, for the group's members on other servers. */
  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void;
  /** A broadcast to every session, for the other servers. */
  broadcastAll(json: Uint8Array, msgpack: Uint8Array): void;
  opened(sessionId: number): void;
  closed(sessionId: number): void;
  /** This server's first member of a group joined (true), or its last one left (false). */
  groupChanged(group: string, hasMembers: boolean): void;
}
