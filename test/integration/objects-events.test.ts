/**
 * Objects in event handlers on worker threads, on both backends: each event's changes commit
 * when it ends; concurrent transfers never create or lose coins; a conflict reruns the event
 * (profiler rollbacks, counter); past max_event_reruns the event fails with a log line; a
 * throwing event commits nothing while its neighbour commits; the profiler's object figures.
 */
import test from 'ava';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { GsfClient, GsfRequestError, ProtocolError } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { waitFor } from './_server.ts';
import { BACKENDS, counter, idle, readNotes, startObjectServer, stopPostgres, storeArgs } from './_objects.ts';
import type { ObjectNote } from '../fixtures/plugins/objects-probe/index.ts';

test.after.always(stopPostgres);

const resetSignals = (): void => {
  for (const name of ['go', 'fetched', 'runs', 'conflict_runs']) native.counterUpdate('objp', name, 0, false);
};

for (const backend of BACKENDS) {
  test.serial(`${backend}: concurrent transfers between 100 accounts keep the coin total; every event commits`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      const ids = await transact((tx) => Array.from({ length: 100 }, (_, i) => tx.create('ProbeAccount', { name: `acc${i}`, coins: 100 }).id));
      const committed = counter('object_database_stat', `${backend}/committed_events`);
      const failedBefore = s.server.dispatcher.totals.failed;
      const pick = (i: number, k: number): string => ids[(i * 7919 + k * 104729) % ids.length]!;
      for (let i = 0; i < 400; i++) {
        const from = pick(i, 1);
        const to = pick(i, 2) === from ? pick(i, 3) : pick(i, 2);
        s.server.invoke('objp.transfer', { from, to, amount: 1 + (i % 5) });
      }
      await idle(60000);
      t.is(s.server.dispatcher.totals.failed, failedBefore);
      t.true(counter('object_database_stat', `${backend}/committed_events`) - committed >= 400);
      native.objCacheClear();
      const coins = await transact(async (tx) => Promise.all(ids.map(async (id) => (await tx.fetch('ProbeAccount', id))!.get('coins'))));
      t.is(coins.reduce((a, b) => a + b, 0), 10000);
      t.true(coins.some((c) => c !== 100));
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: an event whose object changed meanwhile runs again; the profiler and a counter count the rerun`, async (t) => {
    resetSignals();
    const s = await startObjectServer(await storeArgs(backend));
    try {
      native.profilerReset();
      const id = await transact((tx) => tx.create('ProbeAccount', { name: 'slow', coins: 1 }).id);
      const reruns = counter('object', 'event_reruns');
      const file = path.join(s.dir, 'slow.jsonl');
      s.server.invoke('objp.slow_add', { id, file });
      await waitFor(() => readNotes<ObjectNote>(file).some((n) => n.label === 'fetched'), 10000, 'the first run to fetch');
      await transact(async (tx) => (await tx.fetch('ProbeAccount', id, 'write'))!.set('coins', 101));
      native.counterUpdate('objp', 'go', 1, false);
      await idle();
      // Each run reads its own held +1 of objp/runs; only the committed run's stays.
      t.deepEqual(readNotes<ObjectNote>(file).filter((n) => n.label === 'slow_add').map((n) => [n.run, n.coins]), [[1, 2], [1, 102]]);
      t.is(counter('objp', 'runs'), 1);
      t.is((await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins'), 102);
      t.is(counter('object', 'event_reruns') - reruns, 1);
      const profile = await waitFor(() => native.profilerEvent('objp.slow_add'));
      t.is(profile.all_time.execution_count, 1);
      t.is(profile.all_time.rollback_count_max, 1);
      t.is(profile.all_time.object_count_mean, 1);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: past max_event_reruns the event fails with a log line and none of its changes`, async (t) => {
    resetSignals();
    const s = await startObjectServer(await storeArgs(backend, { max_event_reruns: 2 }));
    try {
      native.profilerReset();
      const id = await transact((tx) => tx.create('ProbeAccount', { name: 'hot', coins: 0 }).id);
      const failed = counter('object', 'events_failed_after_reruns');
      const file = path.join(s.dir, 'conflicts.jsonl');
      s.server.invoke('objp.always_conflict', { id, file });
      await idle();
      t.is(readNotes<ObjectNote>(file).length, 3);
      // Its counter change was held with its objects, and dropped with them.
      t.is(counter('objp', 'conflict_runs'), 0);
      t.is(counter('object', 'events_failed_after_reruns') - failed, 1);
      // Three inner changes of +100 committed; the event's own -1 never did.
      t.is((await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins'), 300);
      const line = await waitFor(() => s.logs().find((l) => l.includes("event 'objp.always_conflict' failed")));
      t.true(line.includes(`GSF_ERR_HANDLER_FAILED: plugin 'objects-probe' event 'objp.always_conflict' failed: object changes still conflicted after 2 reruns (ProbeAccount '${id}' changed since it was read); they are discarded`));
      t.is(native.profilerEvent('objp.always_conflict')!.all_time.rollback_count_max, 3);
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: a throwing event commits nothing; the event beside it commits; profiler object figures`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend));
    try {
      native.profilerReset();
      const file = path.join(s.dir, 'notes.jsonl');
      s.server.invoke('objp.create_then_throw', { name: 'ghost' });
      s.server.invoke('objp.open', { name: 'real', coins: 5, file }, { name: 'objp.open' });
      await idle();
      const opened = readNotes<ObjectNote>(file)[0]!;
      native.objCacheClear();
      t.is(await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'ghost')), null);
      t.is((await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'real')))!.id, opened.id!);
      t.true(s.logs().some((l) => l.includes("event 'objp.create_then_throw' failed: changed my mind")));
      const open = native.profilerEvent('objp.open')!.all_time;
      t.is(open.object_create_count_mean, 1);
      t.is(open.object_null_rate_mean, 1);
      // Peeks of a cached account: one fetch each, from the cache, in read (no-lock) mode.
      await transact((tx) => tx.fetch('ProbeAccount', opened.id!));
      for (let i = 0; i < 3; i++) s.server.invoke('objp.peek', { id: opened.id!, file }, { name: 'objp.peek' });
      await idle();
      const peek = native.profilerEvent('objp.peek')!.all_time;
      t.is(peek.execution_count, 3);
      t.is(peek.object_count_mean, 1);
      t.is(peek.object_cache_hit_rate_mean, 1);
      t.is(peek.object_nolock_rate_mean, 1);
      t.deepEqual(readNotes<ObjectNote>(file).slice(1).map((n) => n.coins), [5, 5, 5]);
    } finally {
      await s.stop();
    }
  });
  test.serial(`${backend}: synchronous handlers read cached objects without waiting; a throwing one still answers its client`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend), { SessionService: { websocket_address: '127.0.0.1', websocket_port: 0 } });
    try {
      native.profilerReset();
      const file = path.join(s.dir, 'now.jsonl');
      const id = await transact((tx) => tx.create('ProbeAccount', { name: 'cached', coins: 7 }).id);
      native.objCacheClear();
      s.server.invoke('objp.peek_now', { id, file }, { name: 'objp.peek_now' });
      await idle();
      await transact((tx) => tx.fetch('ProbeAccount', id));
      // Read-only events finish in their claim: none waits for a commit.
      native.counterUpdate('engine', 'events_awaiting_peak', 0, false);
      for (let i = 0; i < 3; i++) s.server.invoke('objp.peek_now', { id, file }, { name: 'objp.peek_now' });
      await idle();
      t.is(counter('engine', 'events_awaiting_peak'), 0);
      t.deepEqual(readNotes<ObjectNote>(file).map((n) => n.coins), [-2, 7, 7, 7]);
      const peek = native.profilerEvent('objp.peek_now')!.all_time;
      t.is(peek.execution_count, 4);
      t.is(peek.object_cache_hit_rate_mean, 0.75);

      const c = await GsfClient.connect({ url: `ws://127.0.0.1:${activeSessions!.listener.port}`, version: '1.0.0', codec: 'json' });
      try {
        await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'cached'));
        t.deepEqual(await c.request('objp.coins_now', { name: 'cached' }), { coins: 7 });
        t.deepEqual(await c.request('objp.coins_now', { name: 'nobody' }), { coins: null });
        const notes: unknown[] = [];
        c.on('objp.note', (body) => void notes.push(body));
        const err = await t.throwsAsync(c.request('objp.create_then_throw', { name: 'ghost' }, 5000));
        t.is((err as GsfRequestError).code, ProtocolError.handlerFailed);
        t.deepEqual(await c.request('objp.coins_now', { name: 'cached' }), { coins: 7 });
        t.deepEqual(notes, [], 'what it sent went with its discarded changes');
        // A commit that keeps conflicting is the failure of the plugin's message handler, not of gsf's engine event.
        const taken = await t.throwsAsync(c.request('objp.create_taken', { name: 'cached' }, 10000));
        t.is((taken as GsfRequestError).code, ProtocolError.handlerFailed);
        const line = await waitFor(() => s.logs().find((l) => l.includes('objp.create_taken')), 10000, 'the failure line');
        t.true(line.includes("GSF_ERR_HANDLER_FAILED: plugin 'objects-probe' message handler 'objp.create_taken' failed: object changes still "
          + 'conflicted after 5 reruns (a unique key is taken (ProbeAccount.name="cached")); they are discarded'), line);
      } finally {
        await c.close();
      }
      await idle();
      t.is(await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'ghost')), null);
      t.true(s.logs().some((l) => l.includes('changed my mind')));
    } finally {
      await s.stop();
    }
  });
  test.serial(`${backend}: a thread decodes a cached object once per stored version; an event's changes to it, thrown away, reach no other event`, async (t) => {
    // One event thread: every read below goes through the same thread's decoded copy.
    const s = await startObjectServer(await storeArgs(backend), { EventDispatcher: { event_threads_size: 1 } });
    try {
      const file = path.join(s.dir, 'shared.jsonl');
      const joined = new Date('2026-03-04T05:06:07.089Z');
      const id = await transact((tx) => tx.create('ProbeAccount', { name: 'shared', coins: 5, joined, tags: ['a'] }).id);
      const peek = (): void => { s.server.invoke('objp.peek_all_now', { id, file }, { name: 'objp.peek_all_now' }); };
      peek();
      s.server.invoke('objp.scribble', { id });
      peek();
      s.server.invoke('objp.scribble', { id });
      peek();
      await idle();
      const before = { label: 'peek_all', run: 0, id, coins: 5, joined: joined.toISOString(), tags: ['a'] };
      t.deepEqual(readNotes<ObjectNote>(file), [before, before, before]);
      t.is(s.logs().filter((l) => l.includes('scribbled')).length, 2);
      // A committed change is a new stored version: the next read decodes it.
      await transact(async (tx) => (await tx.fetch('ProbeAccount', id, 'write'))!.set('coins', 6));
      peek();
      await idle();
      t.deepEqual(readNotes<ObjectNote>(file)[3], { ...before, coins: 6 });
    } finally {
      await s.stop();
    }
  });

  test.serial(`${backend}: a burst of conflicting transfers: the event threads lower how many await at once, so few events run again`, async (t) => {
    const s = await startObjectServer(await storeArgs(backend), { EventDispatcher: { event_threads_size: 2, slow_event_log_threshold_in_ms: 60000 } });
    try {
      const ids = await transact((tx) => Array.from({ length: 2000 }, (_, i) => tx.create('ProbeAccount', { name: `burst${i}`, coins: 100 }).id));
      const reruns = counter('object', 'event_reruns');
      const committed = counter('object_database_stat', `${backend}/committed_events`);
      const failedBefore = s.server.dispatcher.totals.failed;
      const n = backend === 'sqlite' ? 20_000 : 5_000;
      for (let i = 0; i < n; i++) {
        const from = ids[(i * 7919) % ids.length]!;
        const to = ids[(i * 104729 + 1) % ids.length]!;
        if (from !== to) s.server.invoke('objp.transfer', { from, to, amount: 1 });
      }
      await idle(120000);
      t.is(s.server.dispatcher.totals.failed, failedBefore);
      t.true(counter('object_database_stat', `${backend}/committed_events`) - committed >= n * 0.99);
      // With up to 1,000 awaiting per thread every transfer would read accounts others are committing.
      const perEvent = (counter('object', 'event_reruns') - reruns) / n;
      t.log(`reruns per event: ${perEvent.toFixed(3)}`);
      // Without the lowered cap: 0.68 on SQLite, and on PostgreSQL events ran out of reruns and failed.
      t.true(perEvent < (backend === 'sqlite' ? 0.4 : 0.6), `reruns per event: ${perEvent.toFixed(2)}`);
      native.objCacheClear();
      const coins = await transact(async (tx) => Promise.all(ids.map(async (id) => (await tx.fetch('ProbeAccount', id))!.get('coins'))));
      t.is(coins.reduce((a, b) => a + b, 0), 200_000);
    } finally {
      await s.stop();
    }
  });
}
