/**
 * What a native event does besides its object changes, when it conflicts and runs again, fails
 * after its changes, or times out. docs/guides/native-plugins.md: an event's changes "are
 * committed as one transaction when its last continuation has returned; its answer, frames and
 * child events leave after that"; docs/guides/objects.md: "a rerun drops what the conflicting run
 * held … When the changes are discarded (the handler threw, or the reruns ran out) everything the
 * event held is dropped". Native invokes, `object_transact`, `timer_after` / `timer_every` and
 * `timer_start` are held with the event's effects as a managed handler's are (EffectKind invoke
 * and timer). Fixture: test/fixtures/native-plugins/probe-reruns (counters of category "reruns").
 */
import test from 'ava';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, waitFor } from './_server.ts';
import { OBJECTS_PROBE, idle } from './_objects.ts';
import { startSessionServer, type SessionServer } from './_session.ts';
import type { GsfClient } from '../../src/sdk/index.ts';

const PROBE = path.join(fixtures, 'native-plugins', 'probe-reruns');
const value = (category: string, name: string): number => native.counterValue(category, name) ?? 0;
const reruns = (name: string): number => value('reruns', name);

const INVOKE = 1, TIMER_START = 2, TIMER_AFTER = 4, TRANSACT = 8, FAIL = 32, SPIN = 64, BEFORE_FETCH = 128, RANDOM_TAG = 512, SEND = 1024;

let s: SessionServer;
let round = 0;
/** A client whose session the bumps with SEND send and broadcast to, and what it got. */
let client: GsfClient;
let session = 0;
const frames = { sent: 0, broadcast: 0 };

test.before(async () => {
  s = await startSessionServer({ ObjectStore: {}, EventDispatcher: { event_threads_size: 2, event_timeout_in_ms: 800 } },
    ['session-probe', OBJECTS_PROBE, PROBE]);
  client = await s.connect('json');
  client.on('pr.sent', () => void frames.sent++);
  client.on('pr.broadcast', () => void frames.broadcast++);
  session = (await client.request<{ sessionId: number }>('whoami')).sessionId;
});

test.after.always(async () => {
  client?.close();
  await s?.stop();
});

/**
 * Bumps one fresh account from `per` events of their own tags at once (so the two event threads
 * conflict on it), until at least one rerun happened; returns how many events committed.
 */
async function conflictingBumps(flags: number, per = 60): Promise<{ committed: number; rerunsSeen: number }> {
  const failedBefore = value('engine', 'events_failed');
  const rerunsBefore = value('object', 'event_reruns');
  let committed = 0;
  for (let attempt = 0; attempt < 6 && value('object', 'event_reruns') === rerunsBefore; attempt++) {
    const name = `hot-${++round}`;
    for (let i = 0; i < per; i++) s.server.invoke('reruns.bump', [name, flags, session], { tag: 30_000_000_000 + round * 1000 + i });
    await idle();
    committed += per;
  }
  t_assertNoFailures(failedBefore);
  return { committed, rerunsSeen: value('object', 'event_reruns') - rerunsBefore };
}

function t_assertNoFailures(failedBefore: number): void {
  const failed = value('engine', 'events_failed') - failedBefore;
  if (failed !== 0) throw new Error(`${failed} bump(s) failed: the probe expects every bump to commit`);
}

/**
 * Waits until everything the bumps set going has run: the queue drained, then a 0 ms timer
 * started after theirs ran (timers fire in due order, and the timer tag runs its events in order).
 */
async function settled(): Promise<void> {
  await idle();
  const marks = reruns('mark');
  s.server.thread.runtime.addTimer(0, 0, 'reruns.after', 'mark');
  await waitFor(() => reruns('mark') === marks + 1, 10000, 'the mark timer');
  await idle();
}

const EFFECTS = ['child', 'timer_start_ran', 'after', 'transact_body'];
const effectCounts = (): Record<string, number> => Object.fromEntries(EFFECTS.map((c) => [c, reruns(c)]));

const perCommit: Array<[string, number, string]> = [
  ['invoke in the continuation (after the fetch)', INVOKE, 'child'],
  ['invoke in the handler (before the fetch)', INVOKE | BEFORE_FETCH, 'child'],
  ['timer_start in the continuation', TIMER_START, 'timer_start_ran'],
  ['timer_after in the continuation', TIMER_AFTER, 'after'],
  ['object_transact in the continuation', TRANSACT, 'transact_body'],
];

for (const [what, flags, counter] of perCommit) {
  test.serial(`native events that conflict and rerun: ${what} takes effect once per committed event, not once per run`, async (t) => {
    const before = reruns(counter);
    const runsBefore = reruns('runs');
    const dropsBefore = { timer: reruns('timer_start_dropped'), transact: reruns('transact_dropped') };
    const { committed, rerunsSeen } = await conflictingBumps(flags);
    t.true(rerunsSeen > 0, 'the bumps conflicted and reran');
    await settled();
    const ran = reruns(counter) - before;
    const runs = reruns('runs') - runsBefore;
    t.log(`${committed} committed events, ${runs} continuation runs, ${rerunsSeen} reruns, ${counter}: ${ran}`);
    t.is(ran, committed, `${counter}: once per committed event`);
    // User data is released exactly once per call that gave it: after the run, or when the run that asked was dropped.
    if (flags & TIMER_START) t.is(reruns('timer_start_dropped') - dropsBefore.timer, runs);
    if (flags & TRANSACT) t.is(reruns('transact_dropped') - dropsBefore.transact, runs);
  });
}

/** Runs one bump that fails on purpose after its effects; waits for its failure line. */
async function failingBump(flags: number): Promise<string> {
  const failedBefore = value('engine', 'events_failed');
  const at = s.logs().length;
  s.server.invoke('reruns.bump', [`fail-${++round}`, flags | FAIL, session]);
  await waitFor(() => value('engine', 'events_failed') === failedBefore + 1, 10000, 'the event to fail');
  return waitFor(() => s.logs().slice(at).find((l) => l.includes("event 'reruns.bump' failed")), 10000, 'its failure line');
}

test.serial('a native event that fails after its object changes: its child, timers and transaction never run', async (t) => {
  const before = effectCounts();
  const droppedBefore = { timer: reruns('timer_start_dropped'), transact: reruns('transact_dropped') };
  t.regex(await failingBump(INVOKE | TIMER_START | TIMER_AFTER | TRANSACT), /fails on purpose after its effects/);
  await settled();
  t.deepEqual(effectCounts(), before,
    'nothing the failed event asked for runs ("When the changes are discarded … everything the event held is dropped")');
  // Held user data that is dropped is still released exactly once (docs/reference/c-abi.md).
  t.is(reruns('timer_start_dropped') - droppedBefore.timer, 1);
  t.is(reruns('transact_dropped') - droppedBefore.transact, 1);
});

test.serial('a native event that fails after its object changes: its send and broadcast never leave', async (t) => {
  const framesBefore = { ...frames };
  t.regex(await failingBump(SEND), /fails on purpose after its effects/);
  // A frame it wrote would reach the client before the answer to a request made once it ended
  // (the main thread writes a worker's frames in order with later ones).
  await idle();
  await client.request('whoami');
  t.deepEqual(frames, framesBefore, 'its send and broadcast are dropped with its object changes');
});

// The child and the transaction go on random tags: on the event's own tag the timeout would cancel them anyway.
test.serial('a native event that times out after its object changes: its child, timers and transaction never run (its frames are dropped)', async (t) => {
  const before = effectCounts();
  const droppedBefore = { timer: reruns('timer_start_dropped'), transact: reruns('transact_dropped') };
  const spun = reruns('spun');
  const at = s.logs().length;
  const framesBefore = { ...frames };
  const id = s.server.invoke('reruns.bump', [`spin-${++round}`, INVOKE | TIMER_START | TIMER_AFTER | TRANSACT | SPIN | RANDOM_TAG | SEND, session]);
  await waitFor(() => s.logs().slice(at).find((l) => l.includes(`Event timeout: event_name=reruns.bump, event_id=${id}`)), 10000, 'the timeout line');
  await waitFor(() => reruns('spun') === spun + 1, 10000, 'the spin to see its call revoked');
  await settled();
  await client.request('whoami'); // after any frame it wrote
  t.deepEqual(frames, framesBefore, 'its send and broadcast were dropped');
  t.deepEqual(effectCounts(), before,
    'a timed-out event\'s effects are dropped, as a managed one\'s are');
  t.is(reruns('timer_start_dropped') - droppedBefore.timer, 1);
  t.is(reruns('transact_dropped') - droppedBefore.transact, 1);
});
