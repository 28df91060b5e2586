/**
 * This server's sessions as the rest of the main thread uses them (the session feature, the
 * outbound reader, accounts and the cluster): the listener on the main thread
 * (`listener.ts`, `io_threads_size` 1) or the router to I/O threads (`io-sessions.ts`).
 */
import type { CodecName } from '../protocol.ts';
import type { OutboundTarget } from './outbound-reader.ts';
import type { RemoteSessions, SessionStats } from '../listener-types.ts';

export interface LocalSessions extends OutboundTarget {
  readonly stats: SessionStats;
  /** The WebSocket port bound (0 before `listen`). */
  readonly port: number;
  /** Connected sessions. */
  readonly size: number;
  /** The plugins' handled message types changed (a reload). */
  typesChanged(): void;
  /** Maintenance gate: the frame every new session gets and every message is dropped for; null: off. */
  readonly maintenanceFrame: ((codec: CodecName) => string | Uint8Array) | null;
  /**
   * Turns the maintenance gate on (`gate`) or off (null) and sends `announce`, if any, to every
   * session in the same step: a session that opens meanwhile gets the gate's frame once, or the
   * announcement, never both.
   */
  setMaintenance(gate: ((codec: CodecName) => string | Uint8Array) | null, announce: ((codec: CodecName) => string | Uint8Array) | null): void;
  /** Called after a session closed (the account manager logs it out); returns its account. */
  onSessionClosed: (sessionId: number) => string | null;
  /** Set by the Cluster component; null: every session is on this server. */
  remote: RemoteSessions | null;
  has(sessionId: number): boolean;
  sessionIds(): number[];
  /** Stops listening and closes every session with 1001. */
  shutdown(): void | Promise<void>;
  /** Writes one frame to a session (or on to the cluster); false if it is not connected here. */
  send(sessionId: number, frame: string | Uint8Array): boolean;
  /** Writes frames another server sent to a session of this one; false if it is not connected. */
  deliver(sessionId: number, frames: readonly Uint8Array[]): boolean;
  /** Closes a session of this server; false if it is not connected here. */
  end(sessionId: number, code: number, reason: string): boolean;
  /** Sends a per-codec frame to every session of this server. */
  sendAll(frameOf: (codec: CodecName) => string | Uint8Array): void;
  /** Joins or leaves a group for a session of this server; false if it is not here. */
  groupLocal(sessionId: number, group: string, join: boolean): boolean;
  /** Groups with members on this server. */
  groupNames(): string[];
  /** Writes one message to this server's members of a group. */
  publishLocal(group: string, json: Uint8Array, msgpack: Uint8Array): void;
  /** Members of a group on this server now. */
  groupSize(group: string): number;
}
