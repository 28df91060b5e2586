/**
 * The account manager (main thread): binds account ids to sessions, one session per
 * account. A second login of the same account either replaces the first session (closing it
 * with close code 4009) or is refused, by `SessionService.account_login_policy`. Closing a
 * session logs its account out. Feeds the counter `engine/concurrent_user`.
 */
import { native } from '../native.ts';
import { CloseCode } from './protocol.ts';
import type { LoginResult } from './types.ts';

export type LoginPolicy = 'replace' | 'refuse';

export interface AccountSessions {
  sessionExists(sessionId: number): boolean;
  closeSession(sessionId: number, code: number, reason: string): void;
}

export class AccountManager {
  private readonly byAccount = new Map<string, number>();
  private readonly bySession = new Map<number, string>();

  constructor(private readonly policy: LoginPolicy, private readonly sessions: AccountSessions) {
    this.publish();
  }

  /** Logged-in accounts. */
  get count(): number {
    return this.byAccount.size;
  }

  login(accountId: string, sessionId: number): LoginResult {
    if (!this.sessions.sessionExists(sessionId)) return { ok: false, reason: 'no_session' };
    const current = this.byAccount.get(accountId);
    if (current === sessionId) return { ok: true, replaced: null };
    if (current !== undefined && this.policy === 'refuse') return { ok: false, reason: 'already_logged_in', sessionId: current };
    // A session logged in as another account switches accounts.
    const previousAccount = this.bySession.get(sessionId);
    if (previousAccount !== undefined) this.byAccount.delete(previousAccount);
    if (current !== undefined) {
      this.bySession.delete(current);
      this.sessions.closeSession(current, CloseCode.replaced, `account '${accountId}' logged in from another session`.slice(0, 123));
    }
    this.byAccount.set(accountId, sessionId);
    this.bySession.set(sessionId, accountId);
    this.publish();
    return { ok: true, replaced: current ?? null };
  }

  logout(accountId: string): boolean {
    const sessionId = this.byAccount.get(accountId);
    if (sessionId === undefined) return false;
    this.byAccount.delete(accountId);
    this.bySession.delete(sessionId);
    this.publish();
    return true;
  }

  /** Logs out whatever account a (closing) session had; returns it. */
  logoutSession(sessionId: number): string | null {
    const accountId = this.bySession.get(sessionId);
    if (accountId === undefined) return null;
    this.logout(accountId);
    return accountId;
  }

  locate(accountId: string): number | null {
    return this.byAccount.get(accountId) ?? null;
  }

  accountOf(sessionId: number): string | null {
    return this.bySession.get(sessionId) ?? null;
  }

  private publish(): void {
    native.counterUpdate('engine', 'concurrent_user', this.byAccount.size, false, 'Accounts logged in');
  }
}
