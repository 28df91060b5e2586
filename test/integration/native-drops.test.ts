/**
 * User data a native plugin hands gsf with a drop callback (continuations, transactions,
 * timers) is released exactly once on every path (docs/reference/c-abi.md). The fixture
 * test/fixtures/native-plugins/probe-drops counts tokens made, dropped, run, dropped twice
 * and run after their drop.
 */
import test from 'ava';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';

const PROBE = path.join(fixtures, 'native-plugins', 'probe-drops');
const value = (name: string): number => native.counterValue('drops', name) ?? 0;
const snapshot = () => ({ made: value('made'), dropped: value('dropped'), ran: value('ran'), double: value('double_drop'), late: value('run_after_drop'), done: value('done') });

const start = (timeout = 400, threads = 2): Promise<TestServer> =>
  startTestServer({ EventDispatcher: { event_threads_size: threads, event_timeout_in_ms: timeout, shutdown_drain_timeout_in_ms: 3000 } },
    ['objects-probe', PROBE]);

for (const kind of ['delete', 'set'] as const) {
  test.serial(`an event whose object_${kind} fails after it asked for an object: the fetch's drop runs once when the event fails`, async (t) => {
    const s = await start(5000);
    try {
      const before = snapshot();
      const at = s.logs().length;
      s.server.invoke(`drops.${kind}_then_fetch`);
      const failed = await waitFor(() => s.logs().slice(at).find((l) => l.includes(`drops.${kind}_then_fetch`) && l.includes('failed')), 10000, 'the event fails');
      t.true(failed.includes(`object_${kind}: ProbeAccount 'ghost'`), failed);
      // The failing event's pending continuations are dropped before its failure is logged
      // (as carryOut does when the handler's status fails); a later event on the same path proves it settled.
      s.server.invoke('drops.transact', 5);
      await waitFor(() => value('done') === before.done + 1, 10000, 'a later event');
      t.deepEqual(
        { made: value('made') - before.made, dropped: value('dropped') - before.dropped, ran: value('ran') - before.ran },
        { made: 2, dropped: 2, ran: 2 }, 'the fetch token (never run) and the transaction token (body + done) are each dropped once');
    } finally {
      await s.stop();
      t.log('after stop', snapshot());
    }
  });
}

test.serial('an object_transact queued behind an event that times out: its drop runs once when its event is cancelled', async (t) => {
  const s = await start(400);
  try {
    const before = snapshot();
    const tag = 4242;
    s.server.invoke('drops.stall', null, { tag });
    await waitFor(() => value('stalling') >= 1, 10000, 'the stall to run');
    s.server.invoke('drops.transact', tag);
    await waitFor(() => value('made') === before.made + 1, 10000, 'the transaction to be queued');
    await waitFor(() => s.logs().find((l) => l.includes('cancelled 1 queued event(s) of timed-out tag 4242')), 10000, 'the queued transaction cancelled');
    // The transaction never runs: gsf ended it unrun, so its user data is released now, not at shutdown.
    await waitFor(() => value('dropped') === before.dropped + 1, 3000, 'the cancelled transaction\'s drop').catch(() => undefined);
    t.is(value('dropped') - before.dropped, 1, 'drop of the cancelled transaction');
    t.is(value('ran') - before.ran, 0);
  } finally {
    await s.stop();
    t.log('after stop', snapshot(), s.logs().filter((l) => /timeout|cancelled|failed|abandon/i.test(l)).slice(0, 8));
  }
});

test.serial('a transaction body that runs past its event timeout: its drop runs once when the body returns', async (t) => {
  const s = await start(400);
  try {
    const before = snapshot();
    s.server.invoke('drops.transact_stall');
    await waitFor(() => value('stalled') >= 1, 10000, 'the body to see its call revoked and return');
    await waitFor(() => value('dropped') === before.dropped + 1, 3000, 'the drop').catch(() => undefined);
    t.is(value('dropped') - before.dropped, 1);
    t.is(value('ran') - before.ran, 1, 'the body ran, done never');
  } finally {
    await s.stop();
    t.log('after stop', snapshot(), s.logs().filter((l) => /timeout|cancelled|failed|abandon/i.test(l)).slice(0, 8));
  }
});

test.serial('a one-shot timer whose run is cancelled behind a timer that times out: its drop runs once', async (t) => {
  const s = await start(400);
  try {
    const before = snapshot();
    s.server.invoke('drops.timers_stall');
    await waitFor(() => value('stalled') >= 1, 10000, 'timer A to time out');
    await waitFor(() => value('ran') + value('dropped') >= before.ran + before.dropped + 1, 3000, 'timer B to run or be dropped').catch(() => undefined);
    t.is(value('dropped') - before.dropped, 1);
  } finally {
    await s.stop();
    t.log('after stop', snapshot(), s.logs().filter((l) => /timeout|cancelled|failed|abandon/i.test(l)).slice(0, 8));
  }
});
