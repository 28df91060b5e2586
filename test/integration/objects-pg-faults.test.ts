/**
 * The object store on PostgreSQL when the database misbehaves: a constraint of its own refuses
 * one event of a group, a connection whose network path goes silent, and a COMMIT applied whose
 * answer was lost.
 */
import test from 'ava';
import pg from 'pg';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { waitFor } from './_server.ts';
import { counter, startObjectServer, stopPostgres, storeArgs } from './_objects.ts';
import { postgresProxy } from './_postgres.ts';

test.after.always(stopPostgres);

async function sql(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** The writer's backend pid: the connection whose last statement was a COMMIT. */
async function writerPids(c: pg.Client): Promise<number[]> {
  const r = await c.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query IN ('COMMIT', 'ROLLBACK') ORDER BY pid");
  return r.rows.map((x) => x.pid);
}

/**
 * A server on PostgreSQL with accounts a and b, and a CHECK constraint of the database's own
 * that refuses any new version of a (`c`: this test's connection to the database).
 */
async function refusingOne(): Promise<{ s: Awaited<ReturnType<typeof startObjectServer>>; c: pg.Client; a: string; b: string }> {
  const store = await storeArgs('postgresql');
  const s = await startObjectServer(store);
  const c = await sql(store.database_url as string);
  const [a, b] = await transact((tx) => [tx.create('ProbeAccount', { name: 'a', coins: 0 }).id, tx.create('ProbeAccount', { name: 'b', coins: 0 }).id]);
  await c.query('ALTER TABLE "obj_ProbeAccount" ADD CONSTRAINT coins_limit CHECK (id <> $$' + a + '$$ OR version < 2) NOT VALID');
  return { s, c, a: a!, b: b! };
}

test.serial('after a group the database refused, later commits reuse one new connection', async (t) => {
  const { s, c, a, b } = await refusingOne();
  try {
    const err = await t.throwsAsync(transact(async (tx) => { const x = (await tx.fetch('ProbeAccount', a, 'write'))!; x.set('coins', 1); }));
    t.regex(err!.message, /coins_limit/);
    const pids = new Set<number>();
    for (let i = 0; i < 5; i++) {
      await transact(async (tx) => { const x = (await tx.fetch('ProbeAccount', b, 'write'))!; x.set('coins', x.get('coins') + 1); });
      for (const p of await writerPids(c)) pids.add(p);
    }
    // One reconnect after the failed group, then the same connection.
    t.is(pids.size, 1, `writer connections seen over 5 commits: ${[...pids].join(', ')}`);
  } finally {
    await c.end();
    await s.stop();
  }
});

test.serial('one event whose update a CHECK refuses fails alone; its neighbours of the same group commit', async (t) => {
  const { s, c, a, b } = await refusingOne();
  try {
    const bump = (id: string) => transact(async (tx) => { const x = (await tx.fetch('ProbeAccount', id, 'write'))!; x.set('coins', x.get('coins') + 1); });
    const failedBefore = counter('object_database_stat', 'postgresql/failed_events');
    const results = await Promise.allSettled([bump(a), bump(b)]);
    t.is(results[0]!.status, 'rejected');
    t.is(results[1]!.status, 'fulfilled', `b's change is fine, yet: ${(results[1] as PromiseRejectedResult).reason?.message}`);
    t.is(counter('object_database_stat', 'postgresql/failed_events') - failedBefore, 1);
  } finally {
    await c.end();
    await s.stop();
  }
});


test.serial('a writer connection that went silent (dead network path) is given up after database_query_timeout_in_ms; later commits go through', async (t) => {
  const store = await storeArgs('postgresql');
  const target = new URL(store.database_url as string);
  const p = await postgresProxy(target);
  const via = new URL(target.href);
  via.port = String(p.port);
  native.counterUpdate('objp', 'added', 0, false);
  const s = await startObjectServer({ ...store, database_url: via.href, database_query_timeout_in_ms: 1000 }, { EventDispatcher: { event_timeout_in_ms: 500 } });
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'net', coins: 0 }).id);
    p.blackhole();
    s.server.invoke('objp.count_add', { id });
    await waitFor(() => s.logs().some((l) => l.includes('Event timeout: event_name=objp.count_add')), 5000, 'the first event to time out');
    // The database itself is fine: a new connection works (this test's own goes through the same proxy).
    const c = await sql(via.href);
    t.is((await c.query('SELECT count(*)::int AS n FROM "obj_ProbeAccount"')).rows[0].n, 1);
    await c.end();
    // A later event's commit should go through on a new connection.
    s.server.invoke('objp.count_add', { id });
    const done = await waitFor(() => counter('objp', 'added') >= 1, 15000, 'a later commit').then(() => 'committed', () => 'no commit after 15 s');
    t.is(done, 'committed');
  } finally {
    p.cut();
    p.close();
    await s.stop();
  }
});

test.serial('a COMMIT the database applied but whose answer was lost: the event fails, and later reads see the database, not the old cached copy', async (t) => {
  const store = await storeArgs('postgresql');
  const target = new URL(store.database_url as string);
  const p = await postgresProxy(target);
  const via = new URL(target.href);
  via.port = String(p.port);
  const s = await startObjectServer({ ...store, database_url: via.href });
  const c = await sql(target.href);
  try {
    const id = (await transact((tx) => tx.create('ProbeAccount', { name: 'lost', coins: 0 }).id))!;
    const born = await transact(async (tx) => (await tx.fetch('ProbeAccount', id, 'read'))!.version); // cached at the version it was created at
    t.is(await transact(async (tx) => (await tx.fetch('ProbeAccount', id, 'read'))!.get('coins')), 0);
    const answered = p.loseNextCommitAnswer();
    const err = await t.throwsAsync(transact(async (tx) => { const x = (await tx.fetch('ProbeAccount', id, 'write'))!; x.set('coins', 5); }));
    t.regex(err!.message, /commit failed/);
    await answered;
    const row = await c.query<{ version: number }>('SELECT version FROM "obj_ProbeAccount" WHERE id = $1', [id]);
    t.is(Number(row.rows[0]!.version), born + 1, 'the database applied the COMMIT');
    t.is(await transact(async (tx) => (await tx.fetch('ProbeAccount', id, 'read'))!.get('coins')), 5);
    // And a change made now starts from the database's copy: no conflict, no rerun needed.
    await transact(async (tx) => { const x = (await tx.fetch('ProbeAccount', id, 'write'))!; x.set('coins', x.get('coins') + 1); });
    t.is(await transact(async (tx) => (await tx.fetch('ProbeAccount', id, 'read'))!.get('coins')), 6);
  } finally {
    await c.end();
    p.cut();
    p.close();
    await s.stop();
  }
});
