/**
 * Counter changes of events that change objects are effects like their replies: made once when
 * the commit is durable, never for a run that conflicted and ran again, nor for a commit that
 * failed. The event reads its own held change back.
 */
import test from 'ava';
import path from 'node:path';
import Database from 'better-sqlite3';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { waitFor } from './_server.ts';
import { BACKENDS, counter, idle, readNotes, startObjectServer, stopPostgres, storeArgs } from './_objects.ts';
import type { ObjectNote } from '../fixtures/plugins/objects-probe/index.ts';

test.after.always(stopPostgres);

const ADDS = 300;
const GIFTS = 100;

for (const backend of BACKENDS) {
  test.serial(`${backend}: ${ADDS} events racing ${GIFTS} gifts on one account: the counter they increase ends at the committed count`, async (t) => {
    native.counterUpdate('objp', 'added', 0, false);
    const s = await startObjectServer(await storeArgs(backend, { max_event_reruns: 1000 }), { EventDispatcher: { event_threads_size: 4 } });
    try {
      const id = await transact((tx) => tx.create('ProbeAccount', { name: 'hot', coins: 0 }).id);
      const reruns = counter('object', 'event_reruns');
      const failed = s.server.dispatcher.totals.failed;
      const file = path.join(s.dir, 'adds.jsonl');
      const gifts: Array<Promise<void>> = [];
      for (let i = 0; i < ADDS; i++) {
        s.server.invoke('objp.count_add', { id, file });
        if (i % 3 === 0 && gifts.length < GIFTS) {
          gifts.push(transact(async (tx) => {
            const a = (await tx.fetch('ProbeAccount', id, 'write'))!;
            a.set('coins', a.get('coins') + 1000);
          }));
        }
      }
      await Promise.all(gifts);
      await idle(60000);
      t.is(s.server.dispatcher.totals.failed, failed);
      native.objCacheClear();
      t.is((await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins'), ADDS + GIFTS * 1000);
      // Runs conflicted and ran again, yet each committed event added exactly once.
      t.true(counter('object', 'event_reruns') > reruns);
      t.is(counter('objp', 'added'), ADDS);
      // Each run read its own +1 on top of what had committed before it (others may commit in between).
      const notes = readNotes<ObjectNote>(file);
      t.true(notes.length >= ADDS);
      t.deepEqual(notes.filter((n) => !(n.run >= 1 && n.run <= ADDS && n.coins! >= n.run && n.coins! <= ADDS)), []);
    } finally {
      await s.stop();
    }
  });
}

test.serial('sqlite: commits that fail while another process holds the write lock leave the counter unchanged', async (t) => {
  native.counterUpdate('objp', 'added', 0, false);
  const s = await startObjectServer(await storeArgs('sqlite', { sqlite_busy_timeout_in_ms: 20 }));
  const other = new Database(path.join(s.dir, 'data', 'gsf.sqlite'));
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'locked', coins: 0 }).id);
    const failed = s.server.dispatcher.totals.failed;
    other.exec('BEGIN IMMEDIATE');
    for (let i = 0; i < 3; i++) s.server.invoke('objp.count_add', { id });
    await waitFor(() => s.server.dispatcher.totals.failed - failed === 3, 20000, 'the three commits to fail');
    t.is(counter('objp', 'added'), 0);
    t.true(s.logs().some((l) => l.includes('GSF_ERR_OBJECT_STORE') && l.includes('locked')));
    other.exec('ROLLBACK');
    s.server.invoke('objp.count_add', { id });
    await idle();
    t.is(counter('objp', 'added'), 1);
    native.objCacheClear();
    t.is((await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins'), 1);
  } finally {
    other.close();
    await s.stop();
  }
});
