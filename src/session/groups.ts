/**
 * Groups of sessions (rooms, matches), kept by the listener so that a publish reaches each
 * member through the same send path (and backpressure rule) as any frame. Main thread.
 */
export class SessionGroups<S extends { groups: Set<string> | null }> {
  private readonly members = new Map<string, Set<S>>();

  /** `changed` hears a group gain its first member or lose its last (the cluster's routing follows it). */
  constructor(private readonly changed?: (group: string, hasMembers: boolean) => void) {}

  join(session: S, group: string): void {
    let set = this.members.get(group);
    if (set === undefined) {
      this.members.set(group, set = new Set());
      this.changed?.(group, true);
    }
    set.add(session);
    (session.groups ??= new Set()).add(group);
  }

  /** Joins (`join`) or leaves a group. */
  set(session: S, group: string, join: boolean): void {
    if (join) this.join(session, group);
    else this.leave(session, group);
  }

  leave(session: S, group: string): void {
    if (!session.groups?.delete(group)) return;
    this.drop(session, group);
  }

  /** A closing session leaves every group it is in. */
  leaveAll(session: S): void {
    if (session.groups === null) return;
    for (const g of session.groups) this.drop(session, g);
    session.groups = null;
  }

  /** The members of a group now (a copy: sending may close some). */
  of(group: string): S[] {
    const set = this.members.get(group);
    return set === undefined ? [] : [...set];
  }

  /** Groups with members now. */
  names(): string[] {
    return [...this.members.keys()];
  }

  size(group: string): number {
    return this.members.get(group)?.size ?? 0;
  }

  private drop(session: S, group: string): void {
    const set = this.members.get(group);
    if (set === undefined) return;
    set.delete(session);
    if (set.size === 0) {
      this.members.delete(group);
      this.changed?.(group, false);
    }
  }
}
