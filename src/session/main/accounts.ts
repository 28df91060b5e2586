/**
 * The account manager (main thread): binds account ids to sessions, one session per
 * account. A second login of the same account either replaces the first session (closing it
 * with close code 4009) or is refused, by `SessionService.account_login_policy`. Closing a
 * session logs its account out. Feeds the counter `engine/concurrent_user`.
 *
 * With the `Cluster` component a directory (`src/cluster/directory.ts`) makes the rule hold
 * across servers: a login is claimed in Redis first, and the calls become asynchronous.
 */
import { native } from '../../native.ts';
import { CloseCode } from '../protocol.ts';
import type { LoginResult } from '../types.ts';

export type LoginPolicy = 'replace' | 'refuse';

export interface AccountSessions {
  sessionExists(sessionId: number): boolean;
  closeSession(sessionId: number, code: number, reason: string): void;
}

/** The cluster-wide side of logins (every session id here is one of this server's). */
export interface AccountDirectory {
  /** Claims the account for a session of this server; `replaced` is the session it had elsewhere. */
  claim(accountId: string, sessionId: number): Promise<{ ok: true; replaced: number | null } | { ok: false; sessionId: number }>;
  /** The account's login on this session ended. */
  release(accountId: string, sessionId: number): void;
  /** The session the account is logged in on, on any server, or null. */
  locate(accountId: string): Promise<number | null>;
  /** The account of a session on another server, or null. */
  accountOf(sessionId: number): Promise<string | null>;
  /** Logs the account out on whichever server it is logged in on; false if it is not. */
  logoutElsewhere(accountId: string): Promise<boolean>;
}

/** The 4009 close reason (cut to what a close frame holds, at whole characters, by the listener). */
const replacedReason = (accountId: string): string => `account '${accountId}' logged in from another session`;

export class AccountManager {
  private readonly byAccount = new Map<string, number>();
  /**
   * Mirrored in the addon's session accounts (`sessionAccountSet`), from which native handlers'
   * account_of is answered inside their call on any thread.
   */
  private readonly bySession = new Map<number, string>();
  /** Set by the Cluster component; null: logins concern this server only. */
  directory: AccountDirectory | null = null;

  constructor(private readonly policy: LoginPolicy, private readonly sessions: AccountSessions) {
    this.publish();
    if (native.counterGet('engine', 'native_account_answers') === null) {
      native.counterUpdate('engine', 'native_account_answers', 0, false, 'account_of calls of native handlers answered inside the native call');
    }
  }

  /** Logged-in accounts. */
  get count(): number {
    return this.byAccount.size;
  }

  login(accountId: string, sessionId: number): LoginResult | Promise<LoginResult> {
    if (!this.sessions.sessionExists(sessionId)) return { ok: false, reason: 'no_session' };
    const current = this.byAccount.get(accountId);
    if (current === sessionId) return { ok: true, replaced: null };
    if (this.directory !== null) return this.loginInCluster(this.directory, accountId, sessionId);
    if (current !== undefined && this.policy === 'refuse') return { ok: false, reason: 'already_logged_in', sessionId: current };
    return { ok: true, replaced: this.bind(accountId, sessionId) };
  }

  private async loginInCluster(directory: AccountDirectory, accountId: string, sessionId: number): Promise<LoginResult> {
    const claim = await directory.claim(accountId, sessionId);
    if (!claim.ok) return { ok: false, reason: 'already_logged_in', sessionId: claim.sessionId };
    if (!this.sessions.sessionExists(sessionId)) {
      // It closed while the claim was on its way.
      directory.release(accountId, sessionId);
      return { ok: false, reason: 'no_session' };
    }
    const here = this.bind(accountId, sessionId);
    return { ok: true, replaced: claim.replaced ?? here };
  }

  /** Binds the account to the session; closes the session it had here (4009). Returns that session. */
  private bind(accountId: string, sessionId: number): number | null {
    const current = this.byAccount.get(accountId);
    // A session logged in as another account switches accounts.
    const previousAccount = this.bySession.get(sessionId);
    if (previousAccount !== undefined) {
      this.byAccount.delete(previousAccount);
      this.directory?.release(previousAccount, sessionId);
    }
    if (current !== undefined && current !== sessionId) {
      this.bySession.delete(current);
      native.sessionAccountSet(current, null);
      this.sessions.closeSession(current, CloseCode.replaced, replacedReason(accountId));
    }
    this.byAccount.set(accountId, sessionId);
    this.bySession.set(sessionId, accountId);
    native.sessionAccountSet(sessionId, accountId);
    this.publish();
    return current ?? null;
  }

  logout(accountId: string): boolean | Promise<boolean> {
    const sessionId = this.byAccount.get(accountId);
    if (sessionId === undefined) return this.directory?.logoutElsewhere(accountId) ?? false;
    this.unbind(accountId, sessionId);
    this.directory?.release(accountId, sessionId);
    return true;
  }

  private unbind(accountId: string, sessionId: number): void {
    this.byAccount.delete(accountId);
    this.bySession.delete(sessionId);
    native.sessionAccountSet(sessionId, null);
    this.publish();
  }

  /** The server stops: its logins leave the process's session accounts (the addon's copy of `bySession`). */
  forgetSessions(): void {
    for (const sessionId of this.bySession.keys()) native.sessionAccountSet(sessionId, null);
  }

  /** Logs out whatever account a (closing) session had; returns it. */
  logoutSession(sessionId: number): string | null {
    const accountId = this.bySession.get(sessionId);
    if (accountId === undefined) return null;
    this.unbind(accountId, sessionId);
    this.directory?.release(accountId, sessionId);
    return accountId;
  }

  /**
   * A login on another server took the account from this session (or took it while this
   * server was away from the cluster): the session is closed with 4009. False if the account
   * was no longer on it.
   */
  replacedElsewhere(accountId: string, sessionId: number): boolean {
    if (this.byAccount.get(accountId) !== sessionId) return false;
    this.unbind(accountId, sessionId);
    this.sessions.closeSession(sessionId, CloseCode.replaced, replacedReason(accountId));
    return true;
  }

  locate(accountId: string): number | null | Promise<number | null> {
    const here = this.byAccount.get(accountId);
    if (here !== undefined || this.directory === null) return here ?? null;
    return this.directory.locate(accountId);
  }

  accountOf(sessionId: number): string | null | Promise<string | null> {
    const here = this.bySession.get(sessionId);
    if (here !== undefined || this.directory === null || this.sessions.sessionExists(sessionId)) return here ?? null;
    return this.directory.accountOf(sessionId);
  }

  /** Every login on this server: (account, session). */
  bindings(): Array<[string, number]> {
    return [...this.byAccount.entries()];
  }

  private publish(): void {
    native.counterUpdate('engine', 'concurrent_user', this.byAccount.size, false, 'Accounts logged in');
  }
}
