/**
 * What the two database backends (SQLite, PostgreSQL) share: the commit messages, the read
 * and write interfaces, table naming and the check of declarations against stored ones.
 *
 * Each type has its own table `obj_<Type>`: id, version, the fields as one msgpack blob, and
 * one `u_<field>` column with a unique index per unique key. `gsf_object_types` keeps the
 * declaration each table was written with.
 */
import { gsfError } from '../errors.ts';
import { describeField, sameStorage, type TypeDef } from './schema.ts';
import type { FieldInfo, TypeInfo } from './model.ts';

/** Operations of a commit request. */
export const OpKind = { create: 0, update: 1, delete: 2, check: 3 } as const;
export type OpKindValue = (typeof OpKind)[keyof typeof OpKind];

/**
 * One object of a commit: [kind, type index, id, version read (0 for create), fields (create,
 * update), unique-key values (create; update only when a key changed, else null)].
 */
export type CommitOp = [OpKindValue, number, string, number, Uint8Array | null, Array<string | number | null> | null];

/** The operation writes unique-key columns (a create, or an update that changed a key). */
function setsKeys(op: CommitOp): boolean {
  return (op[0] === OpKind.create || op[0] === OpKind.update) && op[5] !== null && op[5].length > 0;
}

/**
 * The order a commit's operations are written in, so that unique keys can move between the
 * commit's own objects (two objects swap names; a new object takes the name another gives up or
 * loses with its delete), whatever the order of the handler's calls: both databases check a
 * unique index after each statement, not at the commit. `release`: the updates that set keys,
 * whose key columns are cleared first (NULL, which no unique index counts); `ops`: the deletes,
 * then the others as given. Operations that set no key keep their order.
 */
export function keyMoveOrder(ops: readonly CommitOp[]): { release: CommitOp[]; ops: readonly CommitOp[] } {
  if (ops.length < 2 || !ops.some(setsKeys)) return { release: [], ops };
  return {
    release: ops.filter((op) => op[0] === OpKind.update && setsKeys(op)),
    ops: [...ops.filter((op) => op[0] === OpKind.delete), ...ops.filter((op) => op[0] !== OpKind.delete)],
  };
}

/** Event thread → writer: one event's changes. */
export interface CommitRequest {
  id: number;
  ops: CommitOp[];
  /** The event making them (the same across its reruns), or 0 outside events. */
  owner: number;
}

export const Status = { ok: 0, conflict: 1, error: 2 } as const;
export type StatusValue = (typeof Status)[keyof typeof Status];

/** What became of one commit request. */
export interface Outcome {
  status: StatusValue;
  /** Why it conflicted or failed ('' when ok). */
  reason: string;
  /**
   * The operation whose object had changed since it was read, when that was the conflict: its
   * cached copy may be outdated (another server's commit), the event's other objects are not.
   */
  stale?: CommitOp;
}

/**
 * Writer → event thread: [request id, status, reason, waited]. `waited` is 1 when the request
 * first waited for an older event's reservation (its conflict is the price of the order, not
 * a sign of a livelock: see writer/thread.ts).
 */
export type CommitReply = [number, StatusValue, string, number];

/** A stored object. */
export interface Row {
  id: string;
  version: number;
  data: Uint8Array;
}

/** Reads for cache misses (one per thread). */
export interface Reader {
  byId(type: TypeInfo, id: string): Row | null | Promise<Row | null>;
  byKey(type: TypeInfo, field: FieldInfo, value: string | number): Row | null | Promise<Row | null>;
  close(): void | Promise<void>;
}

/**
 * The outcome of a request left out of its group once the database was ready for it (`skip` of
 * `applyGroup`): nothing of it is written.
 */
export const LEFT_OUT: Outcome = { status: Status.error, reason: 'left out: its event thread ended while it waited' };

/** Applies groups of commit requests; resolves once the group is durable. */
export interface GroupWriter {
  /**
   * `skip(i)`, asked once the transaction holds the database (SQLite waits for its write lock
   * there), leaves request `i` out (`LEFT_OUT`): its event is gone meanwhile.
   */
  applyGroup(requests: readonly CommitRequest[], types: readonly TypeInfo[], skip?: (i: number) => boolean): Outcome[] | Promise<Outcome[]>;
  close(): void | Promise<void>;
}

/** The quoted table name of a type. */
export function tableOf(type: { name: string }): string {
  return `"obj_${type.name}"`;
}

/** The quoted column of a unique key. */
export function uniqueColumn(field: string): string {
  return `"u_${field}"`;
}

/** The name of a unique key's index. */
export function uniqueIndexName(type: string, field: string): string {
  return `"obj_${type}_u_${field}"`;
}

export const OK: Outcome = { status: Status.ok, reason: '' };


export function conflict(reason: string): Outcome {
  return { status: Status.conflict, reason };
}

/** The conflict reason of an object whose version moved. */
export function changedReason(type: TypeInfo, id: string): string {
  return `${type.name} '${id}' changed since it was read`;
}

/** The conflict of an operation whose object's version moved since it was read. */
export function changed(type: TypeInfo, op: CommitOp): Outcome {
  return { status: Status.conflict, reason: changedReason(type, op[2]), stale: op };
}

/** The conflict reason of a taken id or unique key, from the create/update op. */
export function takenReason(type: TypeInfo, op: CommitOp, isPrimaryKey: boolean): string {
  if (isPrimaryKey) return `${type.name} '${op[2]}' already exists`;
  const values = op[5] ?? [];
  const keys = type.unique.map((f, i) => `${type.name}.${f.name}=${JSON.stringify(values[i])}`);
  return `a unique key is taken (${keys.join(', ')})`;
}

/** What to change in the database for one declared type. */
export interface TypePlan {
  type: TypeDef;
  /** The table does not exist yet. */
  create: boolean;
  /** Unique keys to add (column, backfill, index) and to drop (index). */
  addUnique: string[];
  dropUnique: string[];
  /** The declaration differs from the stored one (or none is stored). */
  store: boolean;
}

/**
 * Compares a declared type with the one its table was written with. Added fields need a
 * default; removed and retyped fields are refused while objects are stored.
 */
export function planType(declared: TypeDef, stored: TypeDef | undefined, hasRows: boolean): TypePlan {
  if (!stored) return { type: declared, create: true, addUnique: [...declared.unique], dropUnique: [], store: true };
  const where = `${declared.file}: type ${declared.name}: field `;
  const problems: string[] = [];
  for (const old of stored.fields) {
    const now = declared.fields.find((f) => f.name === old.name);
    if (!now) problems.push(`${where}${old.name}: was removed, but stored ${declared.name} objects have it (${describeField(old)}); declare it again, or delete the stored objects`);
    else if (!sameStorage(old, now)) problems.push(`${where}${old.name}: is now ${describeField(now)}, but stored ${declared.name} objects hold ${describeField(old)} values`);
  }
  for (const now of declared.fields) {
    if (!stored.fields.some((f) => f.name === now.name) && now.default === undefined) {
      problems.push(`${where}${now.name}: was added without a default; stored ${declared.name} objects do not have it (give it a "default")`);
    }
  }
  if (problems.length > 0 && hasRows) throw gsfError('GSF_ERR_OBJECT_SCHEMA', problems.join('\n'));
  // A unique key whose field changed type (allowed while no objects are stored) gets its column again.
  const retyped = (u: string): boolean => {
    const old = stored.fields.find((f) => f.name === u);
    const now = declared.fields.find((f) => f.name === u);
    return old !== undefined && now !== undefined && old.type !== now.type;
  };
  return {
    type: declared,
    create: false,
    addUnique: declared.unique.filter((u) => !stored.unique.includes(u) || retyped(u)),
    dropUnique: stored.unique.filter((u) => !declared.unique.includes(u)),
    store: JSON.stringify({ ...stored, file: '', index: 0 }) !== JSON.stringify({ ...declared, file: '', index: 0 }),
  };
}

/** The refusal of a unique key whose index name is that of an index of another table (a type no longer declared). */
export function indexClashError(type: TypeDef, field: string, ownerTable: string): Error {
  return gsfError('GSF_ERR_OBJECT_SCHEMA', `${type.file}: type ${type.name}: unique key '${field}': its index ${uniqueIndexName(type.name, field)} `
    + `is the name of an index of the stored table "${ownerTable}" (a type no longer declared); rename the key or the type`);
}

/**
 * Checks a stored value a new unique key is filled with: one the key cannot hold (a NUL, too
 * long) would sit in the key where no lookup finds it. Throws the refusal, naming the object.
 */
export function checkStoredKeyValue(info: TypeInfo, field: string, id: string, value: unknown): void {
  if (value === null) return;
  try {
    info.check(info.field(field), value);
  } catch (err) {
    throw gsfError('GSF_ERR_OBJECT_SCHEMA', `${info.file}: type ${info.name}: unique key '${field}': stored object '${id}' holds a value `
      + `the key cannot hold (${(err as Error).message}); change it, then start again`);
  }
}

/** The refusal of a unique key that stored objects already break. */
export function duplicateKeyError(type: TypeDef, field: string, value: unknown): Error {
  return gsfError('GSF_ERR_OBJECT_SCHEMA', `${type.file}: type ${type.name}: unique key '${field}': stored objects share the value ${JSON.stringify(value)}`);
}
