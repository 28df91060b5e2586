/**
 * The typed object API plugins see. The three registries below are empty here and filled by
 * the declarations `gsf objects types` generates from the JSON files (module augmentation of
 * 'gsf'), so `api.objects.fetch('Account', id)` knows every field's type.
 */

/** Field types of each declared object type: `{ Account: { name: string; coins: number } }`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ObjectTypes {}

/** What `create` needs per type: fields with a default are optional. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ObjectCreateFields {}

/** Unique-key fields per type: `{ Account: 'name' }`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ObjectUniqueKeys {}

/** Names of the declared object types. */
export type ObjectTypeName = keyof ObjectTypes & string;
/** Field names of type `K`. */
export type FieldName<K extends ObjectTypeName> = keyof ObjectTypes[K] & string;
/** Unique-key field names of type `K`. */
export type UniqueKeyName<K extends ObjectTypeName> = K extends keyof ObjectUniqueKeys ? ObjectUniqueKeys[K] & FieldName<K> : never;
/** The `create` argument of type `K`. */
export type CreateFields<K extends ObjectTypeName> = K extends keyof ObjectCreateFields ? ObjectCreateFields[K] : ObjectTypes[K];

/**
 * How an object is fetched:
 * - `read`: the last committed copy, not checked at commit unless the event writes it;
 * - `write`: checked at commit even if unchanged: if another event changed it since, this
 *   event's changes are discarded and it runs again.
 */
export type FetchMode = 'read' | 'write';

/** One object inside an event's transaction. Changes are committed when the event ends. */
export interface GameObject<K extends ObjectTypeName = ObjectTypeName> {
  readonly type: K;
  readonly id: string;
  /** The committed version this copy is based on (0 for an object created by this event). */
  readonly version: number;
  /** A field's value (arrays and maps are frozen: set a new value to change them). */
  get<F extends FieldName<K>>(field: F): ObjectTypes[K][F];
  /** Changes a field; the value is checked against its declared type. */
  set<F extends FieldName<K>>(field: F, value: ObjectTypes[K][F]): void;
  /** Every field, plus the id. */
  toJSON(): ObjectTypes[K] & { id: string };
}

/** What `commit` reports: applied durably, or discarded because an object changed meanwhile. */
export type CommitResult = { ok: true } | { ok: false; conflict: true; reason: string; waited: boolean };

/** Per-event object figures for the profiler (SPEC 2.6 `object_*`). */
export interface TransactionStats {
  created: number;
  /** Objects fetched that exist. */
  fetched: number;
  /** Fetches answered by the cache (nonexistent ones included). */
  cacheHits: number;
  /** Fetches of objects that do not exist. */
  nonexistent: number;
  /** Existing objects fetched in `read` mode. */
  readMode: number;
}

/** The object operations of one transaction (an event's, or one run of `transact`). */
export interface ObjectAccess {
  /** Creates an object; its id is generated unless given. */
  create<K extends ObjectTypeName>(type: K, fields: CreateFields<K>, options?: { id?: string }): GameObject<K>;
  /** Fetches by id; null when there is no such object. */
  fetch<K extends ObjectTypeName>(type: K, id: string, mode?: FetchMode): Promise<GameObject<K> | null>;
  /** Fetches by a unique key (e.g. `fetchBy('Account', 'name', 'ada')`); null when none has it. */
  fetchBy<K extends ObjectTypeName, F extends UniqueKeyName<K>>(type: K, field: F, value: ObjectTypes[K][F], mode?: FetchMode): Promise<GameObject<K> | null>;
  /**
   * Fetches by id without waiting, from this transaction or the shared object cache: the object,
   * null when the cache knows it does not exist, undefined when only the database can tell
   * (then `await fetch`). A hot read served this way keeps a handler synchronous.
   */
  fetchCached<K extends ObjectTypeName>(type: K, id: string, mode?: FetchMode): GameObject<K> | null | undefined;
  /** Fetches by a unique key without waiting, as `fetchCached`: undefined when the cache cannot tell. */
  fetchCachedBy<K extends ObjectTypeName, F extends UniqueKeyName<K>>(type: K, field: F, value: ObjectTypes[K][F], mode?: FetchMode): GameObject<K> | null | undefined;
  /** Deletes an object fetched or created in this transaction. */
  delete(object: GameObject): void;
}

/** An event's transaction: its object reads and writes, committed as one when it ends. */
export interface EventTransaction extends ObjectAccess {
  /** Whether the transaction changed anything (created, set or deleted). */
  readonly dirty: boolean;
  readonly stats: TransactionStats;
  /**
   * Commits every change as one all-or-nothing unit, resolved once durable. A conflict
   * (an object written or fetched for writing changed since it was read) applies nothing.
   */
  commit(): Promise<CommitResult>;
  /** Forgets every change (a failed or rerun event). */
  discard(): void;
}

/** `api.objects`: the running event's objects, and transactions outside events. */
export interface ObjectsApi extends ObjectAccess {
  /** The running event's transaction (created on first use). */
  transaction(): EventTransaction;
  /**
   * Runs `fn` in a transaction of its own and commits it, running it again on conflict (up to
   * `max_event_reruns`). For start hooks, tools and code outside events.
   */
  transact<T>(fn: (tx: ObjectAccess) => T | Promise<T>): Promise<T>;
  /** The names of the declared object types. */
  types(): string[];
}
