/**
 * Keeps the object caches of the servers in step (main thread). Every server commits to the
 * same PostgreSQL database, and versions make concurrent commits safe on their own: a commit
 * from an older copy conflicts and its event runs again, as in one process. What versions do
 * not fix is a stale cached copy served to reads (`'read'` mode), so each durable commit group
 * is announced to the other servers, which drop their older copies of those objects.
 *
 * A copy read from the database just before the commit can land in a cache just after the
 * announcement; a second pass a moment later drops it too. After an absence from Redis,
 * announcements may have been missed, so the whole cache is dropped.
 */
import { native } from '../native.ts';
import { onObjectCommits } from '../objects/store.ts';
import { publishedConfig } from '../objects/config.ts';
import type { CommittedObjects } from '../objects/writer/messages.ts';
import type { Outbox } from './outbox.ts';
import { Coord, type ClusterStats } from './stats.ts';

/** When the second pass runs, after the first. */
const SECOND_PASS_MS = 1000;
/** Objects per announcement record. */
const CHUNK = 512;

export class ObjectSync {
  private typeIndex: Map<string, number> | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly outbox: Outbox, private readonly stats: ClusterStats) {}

  start(): void {
    onObjectCommits((items) => {
      for (let i = 0; i < items.length; i += CHUNK) this.outbox.toAll({ op: 'inv', items: items.slice(i, i + CHUNK) });
      this.stats.coord(Coord.objectInvalidationsSent, items.length);
    });
  }

  private indexOf(type: string): number | undefined {
    const config = publishedConfig();
    if (config === null) return undefined;
    if (this.typeIndex === null) this.typeIndex = new Map(config.schema.types.map((t) => [t.name, t.index]));
    return this.typeIndex.get(type);
  }

  /** Another server committed these objects: drop older copies now and once more a moment later. */
  apply(items: CommittedObjects): void {
    if (publishedConfig() === null) return;
    let dropped = 0;
    for (const [type, id, version] of items) {
      const index = this.indexOf(type);
      if (index !== undefined && native.objCacheInvalidate(index, id, version - 1)) dropped++;
    }
    this.stats.coord(Coord.objectInvalidationsApplied, dropped);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      for (const [type, id, version] of items) {
        const index = this.indexOf(type);
        if (index !== undefined) native.objCacheInvalidate(index, id, version - 1);
      }
    }, SECOND_PASS_MS);
    timer.unref();
    this.timers.add(timer);
  }

  /** Announcements may have been missed (this server was away from Redis): forget every cached object. */
  forgetAll(): void {
    if (publishedConfig() !== null) native.objCacheClear();
  }

  stop(): void {
    onObjectCommits(null);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
