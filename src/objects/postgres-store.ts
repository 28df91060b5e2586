/**
 * The PostgreSQL backend (`ObjectStore.database_url`), through `pg`. The writer thread has
 * one connection; every other thread reads cache misses through a small pool of its own.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import { describeError, OUTCOME_UNKNOWN } from '../errors.ts';
import { storedKeyValue, TypeInfo, type FieldInfo } from './model.ts';
import type { StoreConfig } from './config.ts';
import { applyBatch, batchable } from './postgres-batch.ts';
import type { TypeDef } from './schema.ts';
import {
  changed, checkStoredKeyValue, conflict, duplicateKeyError, indexClashError, keyMoveOrder, OK, OpKind, planType, Status, tableOf, takenReason, uniqueColumn,
  uniqueIndexName,
  type CommitOp, type CommitRequest, type GroupWriter, type Outcome, type Reader, type Row,
} from './storage.ts';

// `pg` is loaded when a PostgreSQL store first connects: event threads of a server without one
// (most of them, and every thread of a server on SQLite) do not pay for loading it.
const require = createRequire(import.meta.url);
let pgModule: typeof pg | undefined;
const pgClient = (): typeof pg => (pgModule ??= require('pg') as typeof pg);

/**
 * Connection settings: TCP keepalive, and a time limit on each query's answer, so that a
 * connection whose network path went silent (a host that crashed, a firewall that drops) fails
 * its query and is replaced instead of holding every later commit.
 */
function connection(config: StoreConfig): pg.ClientConfig {
  return {
    connectionString: config.databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: 10_000,
    ...(config.queryTimeoutMs > 0 ? { query_timeout: config.queryTimeoutMs, connectionTimeoutMillis: config.queryTimeoutMs } : {}),
  };
}

/** An error PostgreSQL answered (a SQLSTATE code), not a lost or silent connection. */
function databaseError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** PostgreSQL's code for a unique violation. */
const UNIQUE_VIOLATION = '23505';

function sqlTypeOf(type: TypeDef, field: string): string {
  return type.fields.find((f) => f.name === field)?.type === 'integer' ? 'BIGINT' : 'TEXT';
}

/** Creates or updates the tables for the declared types (main thread, at start). */
export async function syncPostgresSchema(config: StoreConfig): Promise<void> {
  const client = new (pgClient().Client)({ connectionString: config.databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    // Two servers starting at once against one database take turns.
    await client.query('SELECT pg_advisory_xact_lock(7274917)');
    await client.query('CREATE TABLE IF NOT EXISTS gsf_object_types (name TEXT PRIMARY KEY, definition TEXT NOT NULL)');
    for (const type of config.schema.types) {
      const r = await client.query<{ definition: string }>('SELECT definition FROM gsf_object_types WHERE name = $1', [type.name]);
      const stored = r.rows[0] ? JSON.parse(r.rows[0].definition) as TypeDef : undefined;
      const hasRows = stored !== undefined && (await client.query(`SELECT 1 FROM ${tableOf(type)} LIMIT 1`)).rowCount! > 0;
      const plan = planType(type, stored, hasRows);
      if (plan.create) await client.query(`CREATE TABLE IF NOT EXISTS ${tableOf(type)} (id TEXT PRIMARY KEY, version BIGINT NOT NULL, data BYTEA NOT NULL)`);
      for (const u of plan.dropUnique) await client.query(`DROP INDEX IF EXISTS ${uniqueIndexName(type.name, u)}`);
      for (const u of plan.addUnique) await addUnique(client, type, u);
      if (plan.store) {
        await client.query('INSERT INTO gsf_object_types (name, definition) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET definition = excluded.definition',
          [type.name, JSON.stringify(type)]);
      }
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

async function addUnique(client: pg.Client, type: TypeDef, field: string): Promise<void> {
  // A column of another type (the key's field was retyped while no objects were stored) is made again.
  const column = await client.query<{ data_type: string }>(
    'SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2',
    [`obj_${type.name}`, `u_${field}`]);
  const isBigint = column.rows[0]?.data_type === 'bigint';
  if (column.rows.length > 0 && isBigint !== (sqlTypeOf(type, field) === 'BIGINT')) {
    await client.query(`ALTER TABLE ${tableOf(type)} DROP COLUMN ${uniqueColumn(field)}`);
  }
  await client.query(`ALTER TABLE ${tableOf(type)} ADD COLUMN IF NOT EXISTS ${uniqueColumn(field)} ${sqlTypeOf(type, field)}`);
  // An index of this name on another table (a removed type's) would make CREATE … IF NOT EXISTS
  // keep it, and this key would go unenforced.
  const owner = await client.query<{ tablename: string }>(
    'SELECT tablename FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1', [`obj_${type.name}_u_${field}`]);
  const ownerTable = owner.rows[0]?.tablename;
  if (ownerTable !== undefined && ownerTable !== `obj_${type.name}`) throw indexClashError(type, field, ownerTable);
  // Backfill from the stored fields, so objects written before the key existed are found by it.
  const rows = await client.query<{ id: string; data: Buffer }>(`SELECT id, data FROM ${tableOf(type)}`);
  const info = new TypeInfo(type);
  const seen = new Set<unknown>();
  for (const r of rows.rows) {
    const value = storedKeyValue(type, field, r.data);
    checkStoredKeyValue(info, field, r.id, value);
    if (value !== null && seen.has(value)) throw duplicateKeyError(type, field, value);
    seen.add(value);
    await client.query(`UPDATE ${tableOf(type)} SET ${uniqueColumn(field)} = $1 WHERE id = $2`, [value, r.id]);
  }
  await client.query(`CREATE UNIQUE INDEX IF NOT EXISTS ${uniqueIndexName(type.name, field)} ON ${tableOf(type)} (${uniqueColumn(field)})`);
}

function asRow(id: string, r: unknown[] | undefined): Row | null {
  return r === undefined ? null : { id, version: Number(r[0]), data: r[1] as Uint8Array };
}

/** Cache-miss reads through this thread's pool. */
export class PostgresReader implements Reader {
  private readonly pool: pg.Pool;

  constructor(config: StoreConfig) {
    this.pool = new (pgClient().Pool)({ ...connection(config), max: config.readConnections });
    this.pool.on('error', () => undefined); // an idle client's lost connection: the next query reconnects
  }

  async byId(type: TypeInfo, id: string): Promise<Row | null> {
    const r = await this.pool.query({ name: `gsf_by_id_${type.index}`, text: `SELECT version, data FROM ${tableOf(type)} WHERE id = $1`, values: [id], rowMode: 'array' });
    return asRow(id, r.rows[0] as unknown[] | undefined);
  }

  async byKey(type: TypeInfo, field: FieldInfo, value: string | number): Promise<Row | null> {
    const r = await this.pool.query({
      // Named by position: names built of type and field names could be alike, or past 63 bytes.
      name: `gsf_by_${type.index}_${type.unique.indexOf(field)}`,
      text: `SELECT version, data, id FROM ${tableOf(type)} WHERE ${uniqueColumn(field.name)} = $1`,
      values: [value], rowMode: 'array',
    });
    const row = r.rows[0] as unknown[] | undefined;
    return row === undefined ? null : asRow(row[2] as string, row);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

interface TypeQueries {
  insert: string;
  update: string;
  /** An update that leaves the unique-key columns alone. */
  updateFields: string;
  /** Clears an object's unique-key columns (empty: the type has none); see keyMoveOrder. */
  releaseKeys: string;
  remove: string;
  version: string;
}

/**
 * The writer's connection. A group is one transaction. PostgreSQL aborts a transaction on a
 * failed statement, so an event runs inside a savepoint whenever one of its statements can
 * fail (a create, a unique key) or it has several objects to undo together.
 */
export class PostgresWriter implements GroupWriter {
  private client: pg.Client;
  private readonly queries: TypeQueries[] = [];
  private connected: Promise<void>;
  /** The connection failed (PostgreSQL restarted, the network cut): the next group opens a new one. */
  private broken = false;

  constructor(private readonly config: StoreConfig, types: readonly TypeInfo[]) {
    this.client = this.open();
    this.connected = this.client.connect().then(() => undefined);
    for (const t of types) {
      const u = t.unique.map((f) => uniqueColumn(f.name));
      const n = u.length;
      this.queries[t.index] = {
        insert: `INSERT INTO ${tableOf(t)} (id, version, data${u.map((c) => `, ${c}`).join('')}) VALUES ($1, $2, $3${u.map((_, i) => `, $${4 + i}`).join('')})`,
        update: `UPDATE ${tableOf(t)} SET version = $1, data = $2${u.map((c, i) => `, ${c} = $${3 + i}`).join('')} WHERE id = $${3 + n} AND version = $${4 + n}`,
        updateFields: `UPDATE ${tableOf(t)} SET version = $1, data = $2 WHERE id = $3 AND version = $4`,
        releaseKeys: n === 0 ? '' : `UPDATE ${tableOf(t)} SET ${u.map((c) => `${c} = NULL`).join(', ')} WHERE id = $1 AND version = $2`,
        remove: `DELETE FROM ${tableOf(t)} WHERE id = $1 AND version = $2`,
        version: `SELECT version FROM ${tableOf(t)} WHERE id = $1`,
      };
    }
  }

  /** Resolves once connected (a bad URL fails here). */
  ready(): Promise<void> {
    return this.connected;
  }

  private open(): pg.Client {
    const client = new (pgClient().Client)(connection(this.config));
    // Without a listener a lost idle connection would end the writer thread. Only the current
    // connection's loss counts: the end of one replaced (reconnect) must not mark its successor.
    const lost = (): void => { if (this.client === client) this.broken = true; };
    client.on('error', lost);
    client.on('end', lost);
    return client;
  }

  /** A new connection in place of a failed one; throws (failing the group) while PostgreSQL is away. */
  private async reconnect(): Promise<void> {
    this.client.end().catch(() => undefined);
    this.client = this.open();
    this.broken = false;
    try {
      await this.client.connect();
    } catch (err) {
      this.broken = true;
      throw new Error(`PostgreSQL is unreachable (${describeError(err)}); the next commit tries again`);
    }
  }

  async applyGroup(requests: readonly CommitRequest[], types: readonly TypeInfo[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    try {
      if (this.broken) await this.reconnect();
    } catch (err) {
      const failed: Outcome = { status: Status.error, reason: `commit failed: ${describeError(err)}` };
      return requests.map(() => failed);
    }
    try {
      outcomes.push(...await this.transaction(requests, types));
    } catch (err) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      // The database refused a statement (a constraint or trigger of its own, say) in a group:
      // each event is tried alone, so only the one it refuses fails, not its neighbours.
      if (requests.length > 1 && databaseError(err) && !this.broken) return this.oneByOne(requests, types);
      // Whatever failed, a fresh connection for the next group costs little and cures a dead one.
      this.broken = true;
      const failed: Outcome = { status: Status.error, reason: `commit failed: ${describeError(err)}` };
      return requests.map(() => failed);
    }
    return outcomes;
  }

  /** `requests` in one transaction; throws (the caller rolls back) when a statement fails. */
  private async transaction(requests: readonly CommitRequest[], types: readonly TypeInfo[]): Promise<Outcome[]> {
    const q = this.client;
    const outcomes: Outcome[] = [];
    await q.query('BEGIN');
    // Runs of events that can only conflict are decided and written together (postgres-batch.ts).
    for (let i = 0; i < requests.length;) {
      let end = i;
      while (end < requests.length && batchable(requests[end]!)) end++;
      if (end > i) {
        outcomes.push(...await applyBatch(q, requests.slice(i, end), types));
        i = end;
      } else {
        outcomes.push(await this.applyAlone(requests[i]!, types));
        i++;
      }
    }
    try {
      await q.query('COMMIT');
    } catch (err) {
      // The database refusing the COMMIT rolled it back; a connection lost with it unanswered
      // leaves the outcome unknown, and the group is not tried again.
      if (databaseError(err)) throw err;
      throw new Error(`${OUTCOME_UNKNOWN} (${describeError(err)})`);
    }
    return outcomes;
  }

  /** Each request in a transaction of its own: after a group the database refused. */
  private async oneByOne(requests: readonly CommitRequest[], types: readonly TypeInfo[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    for (const req of requests) {
      if (this.broken) {
        outcomes.push({ status: Status.error, reason: 'commit failed: the connection to PostgreSQL was lost' });
        continue;
      }
      try {
        outcomes.push(...await this.transaction([req], types));
      } catch (err) {
        await this.client.query('ROLLBACK').catch(() => undefined);
        if (!databaseError(err)) this.broken = true;
        outcomes.push({ status: Status.error, reason: `commit failed: ${describeError(err)}` });
      }
    }
    return outcomes;
  }

  /** One event's statements, inside a savepoint when one of them can fail or several must be undone together. */
  private async applyAlone(req: CommitRequest, types: readonly TypeInfo[]): Promise<Outcome> {
    const q = this.client;
    const guarded = req.ops.length > 1 || req.ops.some((op) => op[0] === OpKind.create || (op[0] === OpKind.update && op[5] !== null && op[5].length > 0));
    if (guarded) await q.query('SAVEPOINT gsf_event');
    let outcome = OK;
    try {
      const order = keyMoveOrder(req.ops);
      for (const op of order.release) {
        const r = await q.query(this.queries[op[1]]!.releaseKeys, [op[2], op[3]]);
        if (r.rowCount !== 1) {
          outcome = changed(types[op[1]]!, op);
          break;
        }
      }
      for (const op of outcome === OK ? order.ops : []) {
        const failed = await this.apply(op, types[op[1]]!);
        if (failed) {
          outcome = failed;
          break;
        }
      }
    } catch (err) {
      // Without a savepoint the transaction is lost: let the group fail as a whole.
      if (!guarded) throw err;
      outcome = { status: Status.error, reason: describeError(err) };
    }
    if (guarded) await q.query(outcome === OK ? 'RELEASE SAVEPOINT gsf_event' : 'ROLLBACK TO SAVEPOINT gsf_event; RELEASE SAVEPOINT gsf_event');
    return outcome;
  }

  private async apply(op: CommitOp, type: TypeInfo): Promise<Outcome | null> {
    const s = this.queries[type.index]!;
    const [kind, , id, version, bytes, uniques] = op;
    try {
      switch (kind) {
        case OpKind.create:
          await this.client.query(s.insert, [id, version, asBuffer(bytes!), ...(uniques ?? [])]);
          return null;
        case OpKind.update: {
          const r = uniques === null ? await this.client.query(s.updateFields, [version + 1, asBuffer(bytes!), id, version])
            : await this.client.query(s.update, [version + 1, asBuffer(bytes!), ...uniques, id, version]);
          return r.rowCount === 1 ? null : changed(type, op);
        }
        case OpKind.delete: {
          const r = await this.client.query(s.remove, [id, version]);
          return r.rowCount === 1 ? null : changed(type, op);
        }
        case OpKind.check: {
          const r = await this.client.query({ text: s.version, values: [id], rowMode: 'array' });
          const row = r.rows[0] as unknown[] | undefined;
          return row !== undefined && Number(row[0]) === version ? null : changed(type, op);
        }
      }
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      if (e.code === UNIQUE_VIOLATION) return conflict(takenReason(type, op, (e.constraint ?? '').endsWith('_pkey')));
      throw err;
    }
    return null;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
