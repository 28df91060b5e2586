/**
 * An event that times out while its commit waits in the writer, whose commit then goes
 * through: its object change is stored, the counter change it made with it is made too
 * (the counter counts each committed change once), and the log says so.
 */
import test from 'ava';
import path from 'node:path';
import Database from 'better-sqlite3';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { waitFor } from './_server.ts';
import { counter, idle, readNotes, startObjectServer, storeArgs } from './_objects.ts';

test.serial('sqlite: an event timed out while its commit waited for the write lock, then committed: its counter change is made', async (t) => {
  native.counterUpdate('objp', 'added', 0, false);
  const s = await startObjectServer(await storeArgs('sqlite', { sqlite_busy_timeout_in_ms: 30000 }),
    { EventDispatcher: { event_timeout_in_ms: 300 } });
  const other = new Database(path.join(s.dir, 'data', 'gsf.sqlite'));
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'late', coins: 0 }).id);
    const committed = counter('object_database_stat', 'sqlite/committed_events');
    // Another process holds the write lock: the commit waits in the writer past the event's timeout.
    other.exec('BEGIN IMMEDIATE');
    s.server.invoke('objp.count_add', { id });
    await waitFor(() => s.logs().some((l) => l.includes('Event timeout: event_name=objp.count_add')), 20000, 'the event to time out');
    other.exec('ROLLBACK');
    await waitFor(() => counter('object_database_stat', 'sqlite/committed_events') > committed, 20000, 'the commit to go through');
    // The event's thread learns of the commit after the writer counts it: it then makes the
    // counter change it held, and says so.
    await waitFor(() => s.logs().some((l) => l.includes('objp.count_add') && l.includes('timed out while its commit waited, and the commit went through')),
      20000, 'the event thread to learn that the commit went through');
    await idle();
    native.objCacheClear();
    const coins = (await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins');
    t.is(coins, 1, 'the change was committed');
    t.is(counter('objp', 'added'), coins, 'the counter counts the committed change once');
  } finally {
    other.close();
    await s.stop();
  }
});

test.serial('sqlite: a stop that drops running events says that a commit one had handed to the writer is still written, without what waited for it', async (t) => {
  native.counterUpdate('objp', 'go', 0, false);
  const s = await startObjectServer(await storeArgs('sqlite'), { EventDispatcher: { shutdown_drain_timeout_in_ms: 100 } });
  let stopped = false;
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'stopped', coins: 0 }).id);
    const file = path.join(s.dir, 'slow.jsonl');
    s.server.invoke('objp.slow_add', { id, file });
    await waitFor(() => readNotes<{ label: string }>(file).some((n) => n.label === 'fetched'), 10000, 'the event to fetch');
    await s.stop();
    stopped = true;
    t.true(s.logs().some((l) => l.includes('stopping with 0 queued and 1 running event(s) after 100 ms: they are dropped (a commit one of them had '
      + 'handed to the object writer is still written, without the counter changes and invokes that waited for it)')), s.logs().join('\n'));
  } finally {
    if (!stopped) await s.stop();
  }
});
