/**
 * Group commits on PostgreSQL in a few statements instead of a few per event. Events whose
 * operations can only conflict, never fail (updates that leave unique keys alone, deletes,
 * checks), are decided together: one `SELECT … FOR UPDATE` per type reads and locks the
 * versions of every object they name, the events are checked in order against those versions
 * (each accepted event's changes seen by the ones after it), and the accepted changes are
 * written with one `UPDATE … FROM unnest(…)` and one `DELETE` per type. An event with a create
 * or a unique key still runs alone inside its savepoint (its statements can fail).
 *
 * The outcomes are the ones the statements one by one would give: the locks keep other
 * servers' writers from changing the rows between the read and the write.
 */
import type pg from 'pg';
import type { TypeInfo } from './model.ts';
import { changed, OK, OpKind, tableOf, type CommitRequest, type Outcome } from './storage.ts';

/** Whether every operation of `req` can only conflict (no create, no unique-key change). */
export function batchable(req: CommitRequest): boolean {
  for (const op of req.ops) {
    if (op[0] === OpKind.create) return false;
    if (op[0] === OpKind.update && op[5] !== null && op[5].length > 0) return false;
  }
  return true;
}

/** An object's state as the batch sees it: its version, or null once deleted (or never there). */
type Versions = Map<string, number | null>;

interface Final {
  /** null: deleted. */
  data: Uint8Array | null;
  version: number;
}

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** Decides and writes a run of batchable requests inside the open transaction of `client`. */
export async function applyBatch(client: pg.Client, requests: readonly CommitRequest[], types: readonly TypeInfo[]): Promise<Outcome[]> {
  // Every object named, by type.
  const named = new Map<number, Set<string>>();
  for (const req of requests) {
    for (const op of req.ops) {
      let ids = named.get(op[1]);
      if (!ids) named.set(op[1], ids = new Set());
      ids.add(op[2]);
    }
  }
  const versions = new Map<number, Versions>();
  // Locked type by type and in id order, as every server's writer locks them, so they cannot deadlock.
  for (const [t, ids] of [...named].sort((a, b) => a[0] - b[0])) {
    const r = await client.query({
      text: `SELECT id, version FROM ${tableOf(types[t]!)} WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
      values: [[...ids]],
      rowMode: 'array',
    });
    const found: Versions = new Map();
    for (const row of r.rows as Array<[string, string | number]>) found.set(row[0], Number(row[1]));
    versions.set(t, found);
  }

  const finals = new Map<number, Map<string, Final>>();
  const outcomes: Outcome[] = [];
  for (const req of requests) {
    let outcome = OK;
    for (const op of req.ops) {
      const current = versions.get(op[1])!.get(op[2]) ?? null;
      if (current !== op[3]) {
        outcome = changed(types[op[1]]!, op);
        break;
      }
    }
    outcomes.push(outcome);
    if (outcome !== OK) continue;
    for (const [kind, t, id, version, bytes] of req.ops) {
      if (kind === OpKind.check) continue;
      const next = kind === OpKind.update ? version + 1 : null;
      versions.get(t)!.set(id, next);
      let perType = finals.get(t);
      if (!perType) finals.set(t, perType = new Map());
      perType.set(id, { data: kind === OpKind.update ? bytes : null, version: next ?? version });
    }
  }

  for (const [t, perType] of finals) {
    const table = tableOf(types[t]!);
    const ids: string[] = [], vers: number[] = [], datas: Buffer[] = [], gone: string[] = [];
    for (const [id, f] of perType) {
      if (f.data === null) {
        gone.push(id);
      } else {
        ids.push(id);
        vers.push(f.version);
        datas.push(asBuffer(f.data));
      }
    }
    if (ids.length > 0) {
      await client.query(`UPDATE ${table} AS o SET version = v.version, data = v.data FROM unnest($1::text[], $2::bigint[], $3::bytea[]) AS v(id, version, data) WHERE o.id = v.id`,
        [ids, vers, datas]);
    }
    if (gone.length > 0) await client.query(`DELETE FROM ${table} WHERE id = ANY($1::text[])`, [gone]);
  }
  return outcomes;
}
