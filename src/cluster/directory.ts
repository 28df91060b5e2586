/**
 * `account_login_policy` across servers (`AccountManager.directory`). A login is claimed in
 * Redis, in order with this server's other presence changes: the routing script checks who
 * holds the account (a live server that still holds the session) and either refuses, or takes
 * it and tells the holder's server, which closes that session with 4009.
 */
import type { AccountDirectory } from '../session/main/accounts.ts';
import type { Cluster } from './cluster.ts';

export class ClusterDirectory implements AccountDirectory {
  constructor(private readonly cluster: Cluster, private readonly policy: string) {}

  async claim(accountId: string, sessionId: number): Promise<{ ok: true; replaced: number | null } | { ok: false; sessionId: number }> {
    const answer = await this.cluster.outbox.claim(accountId, sessionId, this.policy);
    if (answer.outcome === 'ok') return { ok: true, replaced: null };
    if (answer.outcome === 'refused') return { ok: false, sessionId: answer.sessionId };
    return { ok: true, replaced: answer.sessionId };
  }

  release(accountId: string, sessionId: number): void {
    this.cluster.outbox.release(accountId, sessionId);
  }

  async locate(accountId: string): Promise<number | null> {
    return (await this.cluster.locate(accountId))?.sessionId ?? null;
  }

  async accountOf(sessionId: number): Promise<string | null> {
    return (await this.cluster.sessionOwner(sessionId))?.account ?? null;
  }

  async logoutElsewhere(accountId: string): Promise<boolean> {
    const where = await this.cluster.locate(accountId);
    if (where === null || where.server === this.cluster.serverId) return false;
    return (await this.cluster.rpc.request(where.server, 'logout', { account: accountId })) === true;
  }
}
