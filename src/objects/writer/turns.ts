/**
 * Turns on contended objects (writer thread). Events whose commits conflicted on one object
 * rerun one after another instead of all at once: the first gets its conflict answered at once
 * and has the object's turn; the others' answers wait in line (first come, first served) until
 * the turn passes to them. The turn passes when its holder's next commit comes back (committed,
 * failed or conflicting on another object), when its event lets go without committing again (a
 * commit with no operations), or after `holdMs`. Each waiting event then reruns once on the
 * version its predecessor committed, so N events racing for one object rerun about N times in
 * all rather than N²/2 (each rerun of all of them used to let one through).
 */
import type { CommitRequest, Outcome } from '../storage.ts';

export interface Waiting<P> {
  p: P;
  outcome: Outcome;
}

interface Turn<P> {
  holder: number;
  until: number;
  waiting: Array<Waiting<P>>;
}

export class ObjectTurns<P extends { request: CommitRequest; waited?: boolean }> {
  private readonly turns = new Map<string, Turn<P>>();
  /** Keys each holder has the turn on. */
  private readonly held = new Map<number, string[]>();
  /** Answers waiting for their turn, on every object. */
  waiting = 0;

  constructor(private readonly holdMs: number) {}

  /**
   * The commit of `p` came back with `outcome` (`key`: the object it conflicted on, null when
   * it did not conflict on one): the turns its event held end, unless it conflicted again on the
   * same object (it keeps that one). Returns true when its answer goes now, false when it waits
   * for its turn; answers whose turn came are added to `granted`.
   */
  settle(p: P, outcome: Outcome, key: string | null, now: number, granted: Array<Waiting<P>>): boolean {
    const owner = p.request.owner;
    const mine = this.held.get(owner);
    if (mine !== undefined) {
      this.held.delete(owner);
      for (const k of mine) {
        if (k === key) this.held.set(owner, [k]);
        else this.pass(k, now, granted);
      }
    }
    if (key === null) return true;
    const turn = this.turns.get(key);
    if (turn === undefined || turn.holder === owner || (turn.until <= now && turn.waiting.length === 0)) {
      this.give(key, owner, now, turn);
      return true;
    }
    turn.waiting.push({ p, outcome });
    this.waiting++;
    p.waited = true;
    return false;
  }

  /** Passes the turns whose holder did not come back in time. */
  expire(now: number, granted: Array<Waiting<P>>): void {
    for (const [key, turn] of this.turns) {
      if (turn.until > now) continue;
      const keys = this.held.get(turn.holder);
      if (keys !== undefined) {
        const left = keys.filter((k) => k !== key);
        if (left.length > 0) this.held.set(turn.holder, left);
        else this.held.delete(turn.holder);
      }
      this.pass(key, now, granted);
    }
  }

  /** Hands out every waiting answer and forgets every turn (the writer stops). */
  drain(granted: Array<Waiting<P>>): void {
    for (const turn of this.turns.values()) granted.push(...turn.waiting);
    this.turns.clear();
    this.held.clear();
    this.waiting = 0;
  }

  private give(key: string, owner: number, now: number, turn: Turn<P> | undefined): void {
    if (turn === undefined) this.turns.set(key, { holder: owner, until: now + this.holdMs, waiting: [] });
    else {
      turn.holder = owner;
      turn.until = now + this.holdMs;
    }
    const keys = this.held.get(owner);
    if (keys === undefined) this.held.set(owner, [key]);
    else if (!keys.includes(key)) keys.push(key);
  }

  /** The turn on `key` goes to the next in line, or ends when nobody waits. */
  private pass(key: string, now: number, granted: Array<Waiting<P>>): void {
    const turn = this.turns.get(key);
    if (turn === undefined) return;
    const next = turn.waiting.shift();
    if (next === undefined) {
      this.turns.delete(key);
      return;
    }
    this.waiting--;
    this.give(key, next.p.request.owner, now, turn);
    granted.push(next);
  }
}
