/** What the writer does once a group's outcome is known: the object cache follows the database. */
import { native } from '../../native.ts';
import type { TypeInfo } from '../model.ts';
import { OpKind, Status, type CommitRequest, type Outcome } from '../storage.ts';
import type { CommittedObjects } from './messages.ts';

/**
 * Makes a durable group visible: new versions into the cache, stale copies out. With `announce`
 * (the Cluster component) it returns what changed, or may have (a failed commit), for the main
 * thread to tell the other servers, which drop their copies.
 */
export function publishGroup(group: readonly CommitRequest[], outcomes: readonly Outcome[], types: readonly TypeInfo[],
  announce: boolean): CommittedObjects | null {
  const committed: CommittedObjects | null = announce ? [] : null;
  for (let i = 0; i < group.length; i++) {
    const { status, stale } = outcomes[i]!;
    // A conflict: the copy the event read of the object that had changed may be outdated in
    // the cache (another server committed it), so its rerun reads it from the database. The
    // event's other objects were current: their entries stay.
    if (stale !== undefined && stale[3] > 0) native.objCacheInvalidate(stale[1], stale[2], stale[3]);
    if (status === Status.error) {
      // A failure may have come after the database applied the changes (a connection lost at
      // COMMIT): the cached copies they replace are dropped, so later reads ask the database,
      // here and, announced, on the other servers (dropping a current copy costs one read).
      for (const [kind, typeIndex, id, version] of group[i]!.ops) {
        if (kind === OpKind.check) continue;
        native.objCacheInvalidate(typeIndex, id, version + 1);
        committed?.push([types[typeIndex]!.name, id, kind === OpKind.create ? version : version + 1]);
      }
    }
    if (status !== Status.ok) continue;
    for (const [kind, typeIndex, id, version, bytes, uniques] of group[i]!.ops) {
      if (committed !== null && kind !== OpKind.check) committed.push([types[typeIndex]!.name, id, kind === OpKind.create ? version : version + 1]);
      if (kind === OpKind.create || kind === OpKind.update) {
        native.objCachePut(typeIndex, id, kind === OpKind.create ? version : version + 1, bytes!);
        const unique = types[typeIndex]!.unique;
        for (let u = 0; u < unique.length; u++) {
          const value = uniques?.[u];
          if (value !== null && value !== undefined) native.objCachePutKey(typeIndex, u, String(value), id);
        }
      } else if (kind === OpKind.delete) {
        native.objCachePutDeleted(typeIndex, id, version + 1);
      }
    }
  }
  return committed;
}
