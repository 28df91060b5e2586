/**
 * A transaction: the objects one event (or one run of `transact`) fetched, created, changed and
 * deleted. Reads see its own writes; `commit` sends every change to the writer as one unit.
 */
import { randomUUID } from 'node:crypto';
import { gsfError } from '../errors.ts';
import { checkId, storableId, storableKey, decodeFieldsIn, encodeFields, type FieldInfo, type Fields, type TypeInfo } from './model.ts';
import { ObjectHandle, ObjectState } from './object-handle.ts';
import { OpKind, Status, type CommitOp, type Row } from './storage.ts';
import type { ThreadStore } from './thread-store.ts';
import type { CommitResult, FetchMode, TransactionStats } from './types.ts';

/** Where a transaction adds the time it waits on the database (the running event). */
export interface WaitSink {
  ioWaitMs: number;
  /** The event's id (the owner of its commits across reruns). */
  readonly id?: number;
}

const TxState = { open: 0, committing: 1, done: 2 } as const;

function checkMode(mode: unknown): boolean {
  if (mode === 'read' || mode === undefined) return false;
  if (mode === 'write') return true;
  throw gsfError('GSF_ERR_OBJECT_VALUE', `fetch mode must be 'read' or 'write', got ${JSON.stringify(mode)}`);
}

export class Transaction {
  dirty = false;
  /** The typed view plugins get of it, made on first use (src/objects/plugin-api.ts). */
  view: unknown = undefined;
  readonly stats: TransactionStats = { created: 0, fetched: 0, cacheHits: 0, nonexistent: 0, readMode: 0 };
  private state: number = TxState.open;
  /** Objects of this transaction per type index, by id. */
  private readonly objects: Array<Map<string, ObjectHandle> | undefined> = [];

  constructor(readonly store: ThreadStore, private readonly sink: WaitSink | null = null) {}

  /** Throws unless the transaction takes changes; the message names `what subject[.field]` (built only then). */
  /** Committed or discarded (by its event's end, or by the handler itself). */
  get finished(): boolean {
    return this.state === TxState.done;
  }

  assertOpen(what: string, subject?: unknown, field?: unknown): void {
    if (this.state === TxState.open) return;
    const call = subject === undefined ? what : `${what} ${String(subject)}${field === undefined ? '' : `.${String(field)}`}`;
    throw gsfError('GSF_ERR_OBJECT_STATE', `${call}: the transaction has already been committed or discarded`);
  }

  markDirty(): void {
    this.dirty = true;
  }

  /** No object fetched, created or changed yet: a read would give the cache's copy. */
  holdsNothing(): boolean {
    if (this.dirty) return false;
    for (const map of this.objects) if (map !== undefined && map.size > 0) return false;
    return true;
  }

  /** Reads a native handler had answered from the cache in native code (`none` of them found nothing). */
  countCachedReads(answered: number, none: number): void {
    this.stats.cacheHits += answered;
    this.stats.nonexistent += none;
    this.stats.fetched += answered - none;
    this.stats.readMode += answered - none;
  }

  private mapOf(type: TypeInfo): Map<string, ObjectHandle> {
    return this.objects[type.index] ??= new Map();
  }

  create(typeName: string, fields: Record<string, unknown>, options?: { id?: string }): ObjectHandle {
    this.assertOpen('create', typeName);
    const type = this.store.model.type(typeName);
    const id = options?.id === undefined ? randomUUID() : checkId(type.name, options.id);
    const map = this.mapOf(type);
    const known = map.get(id);
    if (known && known.state !== ObjectState.deleted) throw gsfError('GSF_ERR_OBJECT_STATE', `${type.name} '${id}' already exists in this event`);
    const handle = new ObjectHandle(this, type, id, known?.version ?? 0, type.newFields(fields),
      known ? ObjectState.changed : ObjectState.created, true);
    // Created over an object this event deleted: one update of its row, whose unique keys are the new object's.
    if (known) handle.keysChanged = true;
    map.set(id, handle);
    this.stats.created++;
    this.dirty = true;
    return handle;
  }

  /** Fetches by id; the cache first, the database on a miss. */
  fetch(typeName: string, id: string, mode?: FetchMode): Promise<ObjectHandle | null> {
    try {
      const found = this.fetchNow(typeName, id, mode);
      return found instanceof Promise ? found : Promise.resolve(found);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `fetch`, answered at once when it can be (own objects, the cache, a synchronous read). */
  fetchNow(typeName: string, id: string, mode?: FetchMode): ObjectHandle | null | Promise<ObjectHandle | null> {
    const type = this.byIdType('fetch', typeName, id);
    const forWrite = checkMode(mode);
    if (!storableId(id)) return null;
    const hit = this.known(type, id, forWrite);
    return hit !== undefined ? hit : this.afterRead(type, this.store.load(type, id), forWrite);
  }

  /**
   * Fetches by id without waiting: from this transaction or the shared cache, null when the
   * cache knows the object does not exist, undefined when only the database can tell.
   */
  fetchCached(typeName: string, id: string, mode?: FetchMode): ObjectHandle | null | undefined {
    const type = this.byIdType('fetchCached', typeName, id);
    const forWrite = checkMode(mode);
    return storableId(id) ? this.known(type, id, forWrite) : null;
  }

  /** Fetches by a unique key: this transaction's own objects, the cache, then the database. */
  fetchBy(typeName: string, field: string, value: unknown, mode?: FetchMode): Promise<ObjectHandle | null> {
    try {
      const found = this.fetchByNow(typeName, field, value, mode);
      return found instanceof Promise ? found : Promise.resolve(found);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `fetchBy`, answered at once when it can be. */
  fetchByNow(typeName: string, field: string, value: unknown, mode?: FetchMode): ObjectHandle | null | Promise<ObjectHandle | null> {
    const [type, f, key, forWrite] = this.byKeyArgs('fetchBy', typeName, field, value, mode);
    if (typeof key === 'string' && !storableKey(key)) return null; // no object can hold it
    const hit = this.knownBy(type, f, key, forWrite);
    if (hit !== undefined) return hit;
    const read = this.store.loadByKey(type, f, key);
    const settle = (row: Row | null): ObjectHandle | null => {
      if (row === null) {
        this.stats.nonexistent++;
        return null;
      }
      const known = this.objects[type.index]?.get(row.id);
      if (known) return known.state !== ObjectState.deleted && known.data[field] === key ? this.reuse(known, forWrite) : null;
      return this.adopt(type, row.id, row.version, this.store.decodeRow(row), forWrite);
    };
    return read instanceof Promise ? this.waited(read).then(settle) : settle(read);
  }

  /**
   * An object a native handler fetched for write that the addon answered from the cache inside
   * the call (the event held no objects then): it joins the transaction at the version the
   * handler saw, with the fields stored at that version. Should the object have changed since,
   * the commit finds the version gone and the event runs again, as for any fetch.
   */
  heldFromCache(typeName: string, id: string, version: number, stored: Uint8Array): ObjectHandle {
    this.assertOpen('fetch', typeName);
    const type = this.store.model.type(typeName);
    const own = this.objects[type.index]?.get(id);
    if (own !== undefined) throw gsfError('GSF_ERR_OBJECT_STATE', `${type.name} '${id}' is already held by this event`);
    this.stats.cacheHits++;
    return this.adopt(type, id, version, decodeFieldsIn(stored, stored.length), true);
  }

  /** Fetches by a unique key without waiting: from this transaction or the cache; undefined otherwise. */
  fetchCachedBy(typeName: string, field: string, value: unknown, mode?: FetchMode): ObjectHandle | null | undefined {
    const [type, f, key, forWrite] = this.byKeyArgs('fetchCachedBy', typeName, field, value, mode);
    if (typeof key === 'string' && !storableKey(key)) return null; // no object can hold it
    return this.knownBy(type, f, key, forWrite);
  }

  /**
   * The type of a fetch by id, once the transaction and the id are checked. An id that is not a
   * string is a mistake in the handler; a string no object can have as id (empty, too long, with
   * a NUL: a client's input, say) names no object, and its fetch finds none.
   */
  private byIdType(what: string, typeName: string, id: string): TypeInfo {
    this.assertOpen(what, typeName);
    const type = this.store.model.type(typeName);
    if (typeof id !== 'string') checkId(type.name, id);
    return type;
  }

  private byKeyArgs(what: string, typeName: string, field: string, value: unknown, mode: FetchMode | undefined): [TypeInfo, FieldInfo, string | number, boolean] {
    this.assertOpen(what, typeName);
    const type = this.store.model.type(typeName);
    const f = type.field(field);
    if (f.uniqueIndex < 0) throw gsfError('GSF_ERR_OBJECT_VALUE', `${type.name}.${field} is not a unique key (keys: ${type.unique.map((u) => u.name).join(', ') || 'none'})`);
    type.check(f, value, true);
    return [type, f, value as string | number, checkMode(mode)];
  }

  /** The object by id from this transaction or the cache; undefined on a cache miss. */
  private known(type: TypeInfo, id: string, forWrite: boolean): ObjectHandle | null | undefined {
    const own = this.objects[type.index]?.get(id);
    if (own) return this.reuse(own, forWrite);
    const cached = this.store.cached(type, id, !forWrite);
    if (cached === undefined) return undefined;
    this.stats.cacheHits++;
    if (cached === null) {
      this.stats.nonexistent++;
      return null;
    }
    return this.adopt(type, id, this.store.lastVersion, cached, forWrite, this.store.lastShared);
  }

  /** The object by unique key from this transaction or the cache; undefined when neither knows. */
  private knownBy(type: TypeInfo, f: FieldInfo, key: string | number, forWrite: boolean): ObjectHandle | null | undefined {
    const field = f.name;
    for (const h of this.objects[type.index]?.values() ?? []) {
      if (h.state !== ObjectState.deleted && h.data[field] === key) return this.reuse(h, forWrite);
    }
    const id = this.store.cachedKey(type, f, key);
    if (id !== null && !this.objects[type.index]?.has(id)) {
      const cached = this.store.cached(type, id, !forWrite);
      // A key entry is a hint: the object must still hold the value.
      if (cached && cached[field] === key) {
        this.stats.cacheHits++;
        return this.adopt(type, id, this.store.lastVersion, cached, forWrite, this.store.lastShared);
      }
    }
    return undefined;
  }

  delete(object: unknown): void {
    if (!(object instanceof ObjectHandle) || object.owner !== this) {
      throw gsfError('GSF_ERR_OBJECT_STATE', 'delete: the object must come from this event (fetch or create it here)');
    }
    this.assertOpen('delete', object.type);
    if (object.state === ObjectState.deleted) return;
    if (object.state === ObjectState.created) this.objects[object.info.index]!.delete(object.id);
    object.state = ObjectState.deleted;
    this.dirty = true;
  }

  private reuse(h: ObjectHandle, forWrite: boolean): ObjectHandle | null {
    if (h.state === ObjectState.deleted) return null;
    if (forWrite) h.forWrite = true;
    return h;
  }

  /** A fetched object joins the transaction; `shared` data is the thread's decoded cache copy (see ThreadStore.cached). */
  private adopt(type: TypeInfo, id: string, version: number, data: Fields, forWrite: boolean, shared = false): ObjectHandle {
    const h = new ObjectHandle(this, type, id, version, data, ObjectState.clean, forWrite, shared);
    this.mapOf(type).set(id, h);
    this.stats.fetched++;
    if (!forWrite) this.stats.readMode++;
    return h;
  }

  private afterRead(type: TypeInfo, read: Row | null | Promise<Row | null>, forWrite: boolean): ObjectHandle | null | Promise<ObjectHandle | null> {
    const settle = (row: Row | null): ObjectHandle | null => {
      if (row === null) {
        this.stats.nonexistent++;
        return null;
      }
      // Another fetch of the same object may have finished while this one waited.
      const known = this.objects[type.index]?.get(row.id);
      if (known) return this.reuse(known, forWrite);
      return this.adopt(type, row.id, row.version, this.store.decodeRow(row), forWrite);
    };
    return read instanceof Promise ? this.waited(read).then(settle) : settle(read);
  }

  private async waited<T>(work: T | Promise<T>): Promise<T> {
    if (!(work instanceof Promise) || this.sink === null) return work;
    const start = performance.now();
    try {
      return await work;
    } finally {
      this.sink.ioWaitMs += performance.now() - start;
    }
  }

  /** Every change as commit operations. */
  operations(): CommitOp[] {
    const ops: CommitOp[] = [];
    for (const map of this.objects) {
      if (!map) continue;
      for (const h of map.values()) {
        const t = h.info.index;
        switch (h.state) {
          case ObjectState.created:
            ops.push([OpKind.create, t, h.id, 0, encodeFields(h.data), h.info.uniqueValues(h.data)]);
            break;
          case ObjectState.changed:
            // Unique keys travel only when one changed: the writer leaves their columns alone otherwise.
            ops.push([OpKind.update, t, h.id, h.version, encodeFields(h.data), h.keysChanged ? h.info.uniqueValues(h.data) : null]);
            break;
          case ObjectState.deleted:
            ops.push([OpKind.delete, t, h.id, h.version, null, null]);
            break;
          default:
            if (h.forWrite) ops.push([OpKind.check, t, h.id, h.version, null, null]);
        }
      }
    }
    return ops;
  }

  /**
   * The commit the handler started itself and has not seen end (it may not await it): its
   * event's end waits for it rather than committing again. Null when none is under way.
   */
  get ownCommit(): Promise<CommitResult> | null {
    return this.state === TxState.committing ? this.started : null;
  }

  private started: Promise<CommitResult> | null = null;

  /** Commits every change as one unit; resolves once durable, or with the conflict. */
  commit(): Promise<CommitResult> {
    this.assertOpen('commit');
    this.started = this.commitNow();
    return this.started;
  }

  private async commitNow(): Promise<CommitResult> {
    this.state = TxState.committing;
    if (!this.dirty) {
      this.state = TxState.done;
      return { ok: true };
    }
    const shared = this.sharedKey();
    if (shared !== null) {
      this.state = TxState.done;
      throw gsfError('GSF_ERR_OBJECT_VALUE', shared);
    }
    const [, status, reason, waited] = await this.waited(this.store.writer().commit(this.operations(), this.sink?.id ?? 0));
    this.state = TxState.done;
    if (status === Status.ok) return { ok: true };
    if (status === Status.conflict) return { ok: false, conflict: true, reason, waited: waited === 1 };
    throw gsfError('GSF_ERR_OBJECT_STORE', `commit failed: ${reason}`);
  }

  /**
   * Two objects of this transaction that would hold the same unique key once written: the
   * database would refuse every rerun of the commit alike, so it is refused here, at once,
   * naming both objects. Keys may move between the transaction's objects (keyMoveOrder).
   */
  private sharedKey(): string | null {
    for (const map of this.objects) {
      if (!map) continue;
      const holders = new Map<string, string>();
      for (const h of map.values()) {
        if (h.state !== ObjectState.created && h.state !== ObjectState.changed) continue;
        const values = h.info.uniqueValues(h.data);
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          if (v === null || v === undefined) continue;
          const key = `${i}:${typeof v}:${String(v)}`;
          const other = holders.get(key);
          if (other !== undefined) {
            return `${h.info.name}.${h.info.unique[i]!.name} ${JSON.stringify(v)} would belong to two objects of one commit ('${other}' and '${h.id}'): a unique key names one object`;
          }
          holders.set(key, h.id);
        }
      }
    }
    return null;
  }

  discard(): void {
    this.state = TxState.done;
    this.objects.length = 0;
    this.dirty = false;
  }
}
