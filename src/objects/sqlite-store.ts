/**
 * The embedded backend: SQLite through better-sqlite3, in WAL mode. The writer thread has the
 * one read-write connection; every other thread reads cache misses on a read-only one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { describeError, gsfError } from '../errors.ts';
import { storedKeyValue, TypeInfo, type FieldInfo } from './model.ts';
import type { StoreConfig } from './config.ts';
import type { ObjectSchema, TypeDef } from './schema.ts';
import {
  changed, checkStoredKeyValue, conflict, duplicateKeyError, indexClashError, keyMoveOrder, LEFT_OUT, OK, OpKind, planType, Status, tableOf, takenReason, uniqueColumn, uniqueIndexName,
  type CommitOp, type CommitRequest, type GroupWriter, type Outcome, type Reader, type Row,
} from './storage.ts';

// better-sqlite3 is loaded when a SQLite store first opens: threads of a server without one do
// not pay for loading it.
const require = createRequire(import.meta.url);
let sqliteModule: typeof Database | undefined;
const sqlite = (): typeof Database => (sqliteModule ??= require('better-sqlite3') as typeof Database);

type Db = Database.Database;
type Statement = Database.Statement;

function open(config: StoreConfig, readonly: boolean): Db {
  const db = new (sqlite())(config.sqlitePath, { readonly, fileMustExist: readonly });
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${config.sqliteSynchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  }
  // A read-only connection may meet the writer's checkpoint; wait rather than fail.
  db.pragma(`busy_timeout = ${Math.trunc(config.sqliteBusyMs ?? 5000)}`);
  return db;
}

/** Creates or updates the tables for the declared types (main thread, at start). */
export function syncSqliteSchema(config: StoreConfig): void {
  fs.mkdirSync(path.dirname(config.sqlitePath), { recursive: true });
  const db = open(config, false);
  try {
    checkWritable(db);
    db.exec('CREATE TABLE IF NOT EXISTS gsf_object_types (name TEXT PRIMARY KEY, definition TEXT NOT NULL)');
    const storedOf = db.prepare<[string], { definition: string }>('SELECT definition FROM gsf_object_types WHERE name = ?');
    // SQLite compares table and index names without case: a type renamed only in case would take
    // over the old one's table, rows never checked against its declaration.
    const caseTwin = db.prepare<[string, string], { name: string }>('SELECT name FROM gsf_object_types WHERE name = ? COLLATE NOCASE AND name <> ?');
    const save = db.prepare('INSERT INTO gsf_object_types (name, definition) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET definition = excluded.definition');
    db.transaction((schema: ObjectSchema) => {
      for (const type of schema.types) {
        const twin = caseTwin.get(type.name, type.name);
        if (twin !== undefined) {
          throw gsfError('GSF_ERR_OBJECT_SCHEMA', `${type.file}: type ${type.name}: the database holds the type '${twin.name}', whose table `
            + `it would share (SQLite compares names without case); declare it as '${twin.name}', or give it another name`);
        }
        const row = storedOf.get(type.name);
        const stored = row ? JSON.parse(row.definition) as TypeDef : undefined;
        const hasRows = stored !== undefined && db.prepare(`SELECT 1 FROM ${tableOf(type)} LIMIT 1`).get() !== undefined;
        const plan = planType(type, stored, hasRows);
        if (plan.create) db.exec(`CREATE TABLE IF NOT EXISTS ${tableOf(type)} (id TEXT PRIMARY KEY, version INTEGER NOT NULL, data BLOB NOT NULL)`);
        for (const u of plan.dropUnique) db.exec(`DROP INDEX IF EXISTS ${uniqueIndexName(type.name, u)}`);
        for (const u of plan.addUnique) addUnique(db, type, u);
        if (plan.store) save.run(type.name, JSON.stringify(type));
      }
    })(config.schema);
  } finally {
    db.close();
  }
}

/**
 * SQLite opens a file it may not write (its permissions, an immutable file, a read-only mount)
 * for reading without a word, and every commit would fail later: a write at start tells. It
 * writes the header's user_version back unchanged.
 */
function checkWritable(db: Db): void {
  try {
    db.pragma(`user_version = ${Number(db.pragma('user_version', { simple: true }))}`);
  } catch (err) {
    throw new Error(`gsf cannot write it (${describeError(err)}); give the server's user write access to the file and its folder`);
  }
}

function addUnique(db: Db, type: TypeDef, field: string): void {
  // Column and index names compare without case in SQLite (a key renamed only in case keeps its column).
  const column = `u_${field}`.toLowerCase();
  const columns = db.prepare(`PRAGMA table_info(${tableOf(type)})`).all() as Array<{ name: string }>;
  if (!columns.some((c) => c.name.toLowerCase() === column)) db.exec(`ALTER TABLE ${tableOf(type)} ADD COLUMN ${uniqueColumn(field)}`);
  // An index of this name on another table (a removed type's) would make CREATE … IF NOT EXISTS
  // keep it, and this key would go unenforced.
  const index = uniqueIndexName(type.name, field);
  const owner = db.prepare(`SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ? COLLATE NOCASE`)
    .pluck().get(index.slice(1, -1)) as string | undefined;
  if (owner !== undefined && owner.toLowerCase() !== tableOf(type).slice(1, -1).toLowerCase()) throw indexClashError(type, field, owner);
  // Backfill from the stored fields, so objects written before the key existed are found by it.
  const rows = db.prepare(`SELECT id, data FROM ${tableOf(type)}`).all() as Array<{ id: string; data: Buffer }>;
  const set = db.prepare(`UPDATE ${tableOf(type)} SET ${uniqueColumn(field)} = ? WHERE id = ?`);
  const info = new TypeInfo(type);
  const seen = new Set<unknown>();
  for (const r of rows) {
    const value = storedKeyValue(type, field, r.data);
    checkStoredKeyValue(info, field, r.id, value);
    if (value !== null && seen.has(value)) throw duplicateKeyError(type, field, value);
    seen.add(value);
    set.run(value as string | number | null, r.id);
  }
  db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${index} ON ${tableOf(type)} (${uniqueColumn(field)})`);
}

function asRow(id: string, r: unknown[] | undefined): Row | null {
  return r === undefined ? null : { id, version: r[0] as number, data: r[1] as Uint8Array };
}

/** Cache-miss reads on a read-only connection of this thread. */
export class SqliteReader implements Reader {
  private readonly db: Db;
  private readonly byIdStmts: Statement[] = [];
  private readonly byKeyStmts = new Map<string, Statement>();

  constructor(config: StoreConfig) {
    this.db = open(config, true);
  }

  byId(type: TypeInfo, id: string): Row | null {
    const stmt = this.byIdStmts[type.index] ??= this.db.prepare(`SELECT version, data FROM ${tableOf(type)} WHERE id = ?`).raw(true);
    return asRow(id, stmt.get(id) as unknown[] | undefined);
  }

  byKey(type: TypeInfo, field: FieldInfo, value: string | number): Row | null {
    const key = `${type.index}:${field.name}`;
    let stmt = this.byKeyStmts.get(key);
    if (!stmt) {
      stmt = this.db.prepare(`SELECT version, data, id FROM ${tableOf(type)} WHERE ${uniqueColumn(field.name)} = ?`).raw(true);
      this.byKeyStmts.set(key, stmt);
    }
    const r = stmt.get(value) as unknown[] | undefined;
    return r === undefined ? null : asRow(r[2] as string, r);
  }

  close(): void {
    this.db.close();
  }
}

interface TypeStatements {
  insert: Statement;
  update: Statement;
  /** An update that leaves the unique-key columns (and their indexes) alone. */
  updateFields: Statement;
  /** Clears an object's unique-key columns (null: the type has none); see keyMoveOrder. */
  releaseKeys: Statement | null;
  remove: Statement;
  version: Statement;
}

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/**
 * The writer's connection. A group is one transaction; an event of several objects runs
 * inside a savepoint, so its conflict undoes only its own statements (a single statement
 * that fails is undone by SQLite itself).
 */
export class SqliteWriter implements GroupWriter {
  private readonly db: Db;
  private readonly stmts: TypeStatements[] = [];
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  private readonly savepoint: Statement;
  private readonly rollbackTo: Statement;
  private readonly release: Statement;

  constructor(config: StoreConfig, types: readonly TypeInfo[]) {
    this.db = open(config, false);
    for (const t of types) {
      const u = t.unique.map((f) => uniqueColumn(f.name));
      this.stmts[t.index] = {
        insert: this.db.prepare(`INSERT INTO ${tableOf(t)} (id, version, data${u.map((c) => `, ${c}`).join('')}) VALUES (?, ?, ?${u.map(() => ', ?').join('')})`),
        update: this.db.prepare(`UPDATE ${tableOf(t)} SET version = ?, data = ?${u.map((c) => `, ${c} = ?`).join('')} WHERE id = ? AND version = ?`),
        updateFields: this.db.prepare(`UPDATE ${tableOf(t)} SET version = ?, data = ? WHERE id = ? AND version = ?`),
        releaseKeys: u.length === 0 ? null : this.db.prepare(`UPDATE ${tableOf(t)} SET ${u.map((c) => `${c} = NULL`).join(', ')} WHERE id = ? AND version = ?`),
        remove: this.db.prepare(`DELETE FROM ${tableOf(t)} WHERE id = ? AND version = ?`),
        version: this.db.prepare(`SELECT version FROM ${tableOf(t)} WHERE id = ?`).pluck(true),
      };
    }
    // IMMEDIATE: a group always writes, so its wait for another connection's write lock (up to
    // sqlite_busy_timeout_in_ms) is here, before any request is applied (see `skip`).
    this.begin = this.db.prepare('BEGIN IMMEDIATE');
    this.commit = this.db.prepare('COMMIT');
    this.rollback = this.db.prepare('ROLLBACK');
    this.savepoint = this.db.prepare('SAVEPOINT gsf_event');
    this.rollbackTo = this.db.prepare('ROLLBACK TO gsf_event');
    this.release = this.db.prepare('RELEASE gsf_event');
  }

  applyGroup(requests: readonly CommitRequest[], types: readonly TypeInfo[], skip?: (i: number) => boolean): Outcome[] {
    const outcomes: Outcome[] = [];
    this.begin.run();
    try {
      for (const [i, req] of requests.entries()) {
        // Asked now: BEGIN IMMEDIATE may have waited long for another connection's write lock.
        if (skip?.(i) === true) {
          outcomes.push(LEFT_OUT);
          continue;
        }
        const guarded = req.ops.length > 1;
        if (guarded) this.savepoint.run();
        let outcome = OK;
        try {
          const order = keyMoveOrder(req.ops);
          for (const op of order.release) {
            const failed = this.stmts[op[1]]!.releaseKeys!.run(op[2], op[3]).changes === 1 ? null : changed(types[op[1]]!, op);
            if (failed) {
              outcome = failed;
              break;
            }
          }
          for (const op of outcome === OK ? order.ops : []) {
            const failed = this.apply(op, types[op[1]]!);
            if (failed) {
              outcome = failed;
              break;
            }
          }
        } catch (err) {
          outcome = { status: Status.error, reason: describeError(err) };
        }
        // Some errors (a full disk, an I/O error) make SQLite roll the whole transaction back by
        // itself: nothing of the group is stored, and nothing more may be written outside it.
        if (!this.db.inTransaction) throw new Error(outcome.reason || 'the transaction was rolled back');
        if (guarded) {
          if (outcome !== OK) this.rollbackTo.run();
          this.release.run();
        }
        outcomes.push(outcome);
      }
      this.commit.run();
    } catch (err) {
      if (this.db.inTransaction) this.rollback.run();
      const failed: Outcome = { status: Status.error, reason: `commit failed: ${describeError(err)}` };
      return requests.map(() => failed);
    }
    return outcomes;
  }

  private apply(op: CommitOp, type: TypeInfo): Outcome | null {
    const s = this.stmts[type.index]!;
    const [kind, , id, version, bytes, uniques] = op;
    try {
      switch (kind) {
        case OpKind.create:
          s.insert.run(id, version, asBuffer(bytes!), ...(uniques ?? []));
          return null;
        case OpKind.update: {
          const r = uniques === null ? s.updateFields.run(version + 1, asBuffer(bytes!), id, version)
            : s.update.run(version + 1, asBuffer(bytes!), ...uniques, id, version);
          return r.changes === 1 ? null : changed(type, op);
        }
        case OpKind.delete:
          return s.remove.run(id, version).changes === 1 ? null : changed(type, op);
        case OpKind.check:
          return s.version.get(id) === version ? null : changed(type, op);
      }
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return conflict(takenReason(type, op, true));
      if (code === 'SQLITE_CONSTRAINT_UNIQUE') return conflict(takenReason(type, op, false));
      throw err;
    }
    return null;
  }

  close(): void {
    this.db.close();
  }
}
