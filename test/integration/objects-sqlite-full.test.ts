/**
 * The SQLite writer on a database that runs out of space in the middle of a group (SQLite's
 * page limit stands in for a full disk): every event of the group is answered, and an event
 * answered with a failure has none of its changes in the database, so no client is told a
 * change failed while it is stored.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import { loadSchema } from '../../src/objects/schema.ts';
import { Model, encodeFields } from '../../src/objects/model.ts';
import { SqliteWriter, syncSqliteSchema } from '../../src/objects/sqlite-store.ts';
import { OpKind, Status, type CommitRequest } from '../../src/objects/storage.ts';
import type { StoreConfig } from '../../src/objects/config.ts';

const TYPES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'plugins', 'objects-probe', 'objects', 'probe-types.json');

test('sqlite: a group that runs out of space: each event answered as failed has no row in the database', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-sqlite-full-'));
  const schema = loadSchema([TYPES]);
  const config = {
    backend: 'sqlite', sqlitePath: path.join(dir, 'gsf.sqlite'), sqliteSynchronous: 'full', sqliteBusyMs: 5000, databaseUrl: '',
    cacheBytes: 1 << 20, maxReruns: 5, groupMaxEvents: 1000, readConnections: 1, queryTimeoutMs: 0, decodedCopies: 0, slowQuerySec: 1,
    schema, instance: 'full-test', announceCommits: false,
  } satisfies StoreConfig;
  syncSqliteSchema(config);
  const model = new Model(schema);
  const account = model.type('ProbeAccount');
  const writer = new SqliteWriter(config, model.types);
  try {
    // Room for a few more pages only: the disk fills up part way through the group.
    const db = (writer as unknown as { db: Database.Database }).db;
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 4}`);
    const requests: CommitRequest[] = Array.from({ length: 12 }, (_, i) => {
      const fields = account.newFields({ name: `full${i}`, tags: ['x'.repeat(1500)] });
      return { id: i + 1, owner: 0, ops: [[OpKind.create, account.index, `full${i}`, 0, encodeFields(fields), account.uniqueValues(fields)]] };
    });
    const outcomes = writer.applyGroup(requests, model.types);
    t.is(outcomes.length, requests.length);
    t.true(outcomes.some((o) => o.status === Status.error), 'the group never ran out of space: it tested nothing');
    const check = new Database(config.sqlitePath, { readonly: true });
    try {
      const stored = new Set((check.prepare('SELECT id FROM "obj_ProbeAccount"').all() as Array<{ id: string }>).map((r) => r.id));
      const mismatched = requests
        .map((r, i) => ({ id: r.ops[0]![2], answered: outcomes[i]!.status === Status.ok ? 'ok' : 'failed', stored: stored.has(r.ops[0]![2]) }))
        .filter((x) => (x.answered === 'ok') !== x.stored);
      t.deepEqual(mismatched, []);
    } finally {
      check.close();
    }
  } finally {
    writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
