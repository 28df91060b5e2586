/**
 * The session listener's way to the rest of the cluster (`SessionListener.remote`): operations
 * for sessions this server does not hold, publishes and broadcasts for other servers' sessions,
 * and this server's own sessions and groups for presence. All of it goes into the outbox, in
 * the order the listener applies it, so a session's messages keep their order across servers.
 */
import type { RemoteSessions } from '../session/listener-types.ts';
import type { Outbox } from './outbox.ts';

export class RemoteSessionsOf implements RemoteSessions {
  constructor(private readonly outbox: Outbox) {}

  send(sessionId: number, frame: Uint8Array | string): void {
    this.outbox.send(sessionId, frame);
  }

  close(sessionId: number, code: number, reason: string): void {
    this.outbox.close(sessionId, code, reason);
  }

  group(sessionId: number, group: string, join: boolean): void {
    this.outbox.group(sessionId, group, join);
  }

  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void {
    this.outbox.publish(group, json, msgpack);
  }

  broadcastAll(json: Uint8Array, msgpack: Uint8Array): void {
    this.outbox.broadcastAll(json, msgpack);
  }

  opened(sessionId: number): void {
    this.outbox.sessionOpened(sessionId);
  }

  closed(sessionId: number): void {
    this.outbox.sessionClosed(sessionId);
  }

  groupChanged(group: string, hasMembers: boolean): void {
    this.outbox.groupHere(group, hasMembers);
  }
}
