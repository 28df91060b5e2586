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
import { PostgresReader } from './postgres-store.ts';

/** What a cache lookup found: the fields, null for a deleted object, undefined for a miss. */
export type Cached = Fields | null | undefined;

/** A cached object as this thread decoded it, and the stamp of the cache entry it came from. */
export interface Decoded {
  stamp: number;
  fields: Fields;
}

/**
 * The decoded objects of one type a thread keeps (`ObjectStore.decoded_copies_per_type`), so
 * that a hot object read by event after event is decoded once per stored version, not once per
 * read. Only reads are kept: an object fetched for writing is about to get a new version.
 *
 * Two generations: new copies go into the young one, and when it holds `limit` the old one is
 * dropped whole and the young one takes its place; a read finds a copy in either. No entry is
 * deleted one by one (a Map that loses its oldest entry at every insertion keeps skipping its
 * deleted slots to find the next oldest: that cost more than the decode it saves).
 */
export class DecodedCopies {
  private young = new Map<string, Decoded>();
  private old = new Map<string, Decoded>();

  constructor(private readonly limit: number) {}

  get(id: string): Decoded | undefined {
    return this.young.get(id) ?? this.old.get(id);
  }

  set(id: string, copy: Decoded): void {
    if (this.young.size >= this.limit) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(id, copy);
  }
}

export class ThreadStore {
  readonly model: Model;
  readonly db: string;
  private reader: Reader | null = null;
  private writerClient: WriterClient | null = null;
  private buffer = new Uint8Array(16 * 1024);
  /** [version, stamp] of a lookup; the stamp goes in as the one of the copy this thread holds. */
  private readonly meta = new Float64Array(2);
  private readonly decoded: Array<DecodedCopies | undefined> = [];
  /** The version of the last `cached` hit. */
  lastVersion = 0;
  /** Whether the last `cached` fields are the thread's shared decoded copy (else the caller's own). */
  lastShared = false;

  constructor(readonly config: StoreConfig, configVersion: number) {
    this.model = new Model(config.schema);
    this.db = databaseLabel(config);
    // Native handlers' reads the cache can answer are answered in native code (binding/cached_reads.cc).
    const types = this.model.types.map((t) => [t.name, t.index, [...t.fields.keys()], t.unique.map((f) => [f.name, f.uniqueIndex, f.type === 'integer'])]);
    native.objReadTypes(encodePayload(types), configVersion);
  }

  /**
   * The cached copy of an object (sets `lastVersion` when found or deleted). The fields are
   * this thread's decoded copy of the stored bytes, shared by every read of them: never change
   * them (an ObjectHandle copies them on its first change). `keep`: remember a decoded copy
   * for the next read.
   */
  cached(type: TypeInfo, id: string, keep: boolean): Cached {
    if (this.config.decodedPerType === 0) keep = false;
    const memo = this.decoded[type.index] ??= new DecodedCopies(this.config.decodedPerType);
    const held = memo.get(id);
    this.meta[1] = held === undefined ? 0 : held.stamp;
    let n = native.objCacheGet(type.index, id, this.buffer, this.meta);
    if (n === -3) {
      this.lastVersion = this.meta[0]!;
      this.lastShared = true;
      return held!.fields;
    }
    if (n > this.buffer.length) {
      this.buffer = new Uint8Array(Math.max(n, this.buffer.length * 2));
      this.meta[1] = 0;
      n = native.objCacheGet(type.index, id, this.buffer, this.meta);
    }
    if (n < 0) {
      if (n === -1) return undefined;
      this.lastVersion = this.meta[0]!;
      return null;
    }
    this.lastVersion = this.meta[0]!;
    const fields = decodeFieldsIn(this.buffer, n);
    this.lastShared = keep;
    // A copy fetched for writing is the caller's own: it is not kept. (A kept copy of an
    // older entry stays: stamps are unique, so it is only ever given for the bytes it came from.)
    if (!keep) return fields;
    if (held !== undefined) {
      held.stamp = this.meta[1]!;
      held.fields = fields;
    } else {
      memo.set(id, { stamp: this.meta[1]!, fields });
    }
    return fields;
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

/** Closes this thread's store (a stopping server's main thread). */
export async function closeThreadStore(): Promise<void> {
  const store = current;
  current = null;
  await store?.close();
}
