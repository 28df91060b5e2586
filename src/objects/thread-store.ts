/**
 * One thread's access to the object store: the shared native cache, this thread's read
 * connection for cache misses, and its link to the writer. Made on first use from the settings
 * the main thread published, and made again when a new server publishes others.
 */
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';
import { databaseLabel, publishedConfig, publishedConfigVersion, type StoreConfig } from './config.ts';
import { encodePayload } from '../events/codec.ts';
import { decodeFields, decodeFieldsIn, Model, type FieldInfo, type Fields, type TypeInfo } from './model.ts';
import { WriterClient } from './channel.ts';
import { ObjectCounter, OBJECT, recordFetch } from './stats.ts';
import type { Reader, Row } from './storage.ts';
import { SqliteReader } from './sqlite-store.ts';
import { DecodedCopies } from './decoded-copies.ts';
import { PostgresReader } from './postgres-store.ts';

/** What a cache lookup found: the fields, null for a deleted object, undefined for a miss. */
export type Cached = Fields | null | undefined;

/** The buffer of the arrays this thread's lookups use (`objCacheBind`): each store's is its own. */
let boundBuffer: Uint8Array | null = null;

export class ThreadStore {
  readonly model: Model;
  readonly db: string;
  private reader: Reader | null = null;
  private writerClient: WriterClient | null = null;
  private buffer = new Uint8Array(16 * 1024);
  /** [version, stamp] of a lookup. */
  private readonly meta = new Float64Array(2);
  private readonly decoded: DecodedCopies;
  /** The version of the last `cached` hit. */
  lastVersion = 0;
  /** Whether the last `cached` fields are the thread's shared decoded copy (else the caller's own). */
  lastShared = false;

  constructor(readonly config: StoreConfig, configVersion: number) {
    this.model = new Model(config.schema);
    this.db = databaseLabel(config);
    this.decoded = new DecodedCopies(config.decodedCopies);
    // Native handlers' reads the cache can answer are answered in native code (binding/cached_reads.cc).
    const types = this.model.types.map((t) => [t.name, t.index, [...t.fields.keys()], t.unique.map((f) => [f.name, f.uniqueIndex, f.type === 'integer'])]);
    native.objReadTypes(encodePayload(types), configVersion);
  }

  /**
   * The cached copy of an object (sets `lastVersion` when found or deleted). When
   * `lastShared`, the fields are this thread's decoded copy of the stored bytes, shared by every
   * read of them: never change them (an ObjectHandle copies them on its first change); else
   * they are the caller's own. `keep`: remember a decoded copy for the next read.
   */
  cached(type: TypeInfo, id: string, keep: boolean): Cached {
    const decoded = this.decoded;
    if (boundBuffer !== this.buffer) this.bind();
    let n = native.objCacheLookup(type.index, id);
    if (n > this.buffer.length) {
      this.buffer = new Uint8Array(Math.max(n, this.buffer.length * 2));
      this.bind();
      n = native.objCacheLookup(type.index, id);
    }
    if (n < 0) {
      if (n === -1) return undefined;
      this.lastVersion = this.meta[0]!;
      if (n === -2) return null;
      // -3: this thread holds the entry's bytes decoded.
      this.lastShared = true;
      return decoded.get(this.meta[1]!)!;
    }
    this.lastVersion = this.meta[0]!;
    const fields = decodeFieldsIn(this.buffer, n);
    // A copy fetched for writing is the caller's own: it is not kept.
    this.lastShared = keep && decoded.stamps !== null;
    if (this.lastShared) decoded.set(this.meta[1]!, fields);
    return fields;
  }

  /** Binds this store's arrays for the thread's lookups (another store of the thread may have bound its own). */
  private bind(): void {
    native.objCacheBind(this.buffer, this.meta, this.decoded.stamps);
    boundBuffer = this.buffer;
  }

  /** The fields of a row read from the database. */
  decodeRow(row: Row): Fields {
    return decodeFields(row.data);
  }

  /** The id the cache remembers for a unique key, or null. */
  cachedKey(type: TypeInfo, field: FieldInfo, value: string | number): string | null {
    return native.objCacheGetKey(type.index, field.uniqueIndex, String(value));
  }

  private readerOf(): Reader {
    return this.reader ??= this.config.backend === 'sqlite' ? new SqliteReader(this.config) : new PostgresReader(this.config);
  }

  /** Reads an object from the database and caches it. */
  load(type: TypeInfo, id: string): Row | null | Promise<Row | null> {
    return this.timed(() => this.readerOf().byId(type, id), type);
  }

  /** Reads an object by unique key from the database and caches it. */
  loadByKey(type: TypeInfo, field: FieldInfo, value: string | number): Row | null | Promise<Row | null> {
    return this.timed(() => this.readerOf().byKey(type, field, value), type, field, value);
  }

  private timed(read: () => Row | null | Promise<Row | null>, type: TypeInfo, field?: FieldInfo, value?: string | number): Row | null | Promise<Row | null> {
    native.counterIncrease(OBJECT, ObjectCounter.outstandingFetch, 1);
    const start = performance.now();
    const done = (row: Row | null): Row | null => {
      native.counterDecrease(OBJECT, ObjectCounter.outstandingFetch, 1);
      const seconds = (performance.now() - start) / 1000;
      recordFetch(this.db, seconds, seconds > this.config.slowQuerySec);
      if (row) {
        native.objCachePut(type.index, row.id, row.version, row.data);
        if (field) native.objCachePutKey(type.index, field.uniqueIndex, String(value), row.id);
      }
      return row;
    };
    let result: Row | null | Promise<Row | null>;
    try {
      result = read();
    } catch (err) {
      native.counterDecrease(OBJECT, ObjectCounter.outstandingFetch, 1);
      throw gsfError('GSF_ERR_OBJECT_STORE', `reading ${type.name} failed: ${(err as Error).message}`);
    }
    if (result instanceof Promise) {
      return result.then(done, (err: unknown) => {
        native.counterDecrease(OBJECT, ObjectCounter.outstandingFetch, 1);
        throw gsfError('GSF_ERR_OBJECT_STORE', `reading ${type.name} failed: ${(err as Error).message}`);
      });
    }
    return done(result);
  }

  /** Commits of this thread waiting for the writer's answer. */
  get inFlight(): number {
    return this.writerClient?.outstanding ?? 0;
  }

  /** This thread's link to the writer. */
  writer(): WriterClient {
    return this.writerClient ??= new WriterClient(this.config.instance);
  }

  /** Closes the read connection and the writer link. */
  async close(): Promise<void> {
    this.writerClient?.close();
    this.writerClient = null;
    const reader = this.reader;
    this.reader = null;
    await reader?.close();
  }
}

let current: ThreadStore | null = null;

/** This thread's store for the running server; throws when it has no object types. */
export function threadStore(): ThreadStore {
  const config = publishedConfig();
  if (current !== null && current.config === config) return current;
  if (current !== null) void current.close();
  current = null;
  native.objReadTypes(null, -1);
  if (config === null) throw gsfError('GSF_ERR_OBJECT_STATE', 'this server has no object store: no object types are declared (objects/*.json)');
  current = new ThreadStore(config, publishedConfigVersion());
  return current;
}

/** Commits of this thread waiting for the writer's answer (0 without a store). */
export function commitsInFlight(): number {
  return current?.inFlight ?? 0;
}

/** Closes this thread's store (a stopping server's main thread). */
export async function closeThreadStore(): Promise<void> {
  const store = current;
  current = null;
  await store?.close();
}
