/**
 * Session opened and closed handlers that await (docs/guides/plugins.md, "After an await"): they
 * stay inside their event, so their object changes commit with it, and what a run that conflicts
 * did after its await is dropped with it (docs/guides/objects.md, "Effects wait for the commit").
 * Scripted handlers: test/fixtures/plugins/probe-held.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';

import { transact } from '../../src/objects/plugin-api.ts';
import { GsfClient } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { fixtures, waitFor, type Components, type TestServer } from './_server.ts';
import { counter, idle, OBJECTS_PROBE, readNotes, startObjectServer, storeArgs } from './_objects.ts';
import { CLOSE_SCRIPT, OPEN_SCRIPT, type HeldNote, type HeldPayload, type Step } from '../fixtures/plugins/probe-held/index.ts';

const PROBE = path.join(fixtures, 'plugins', 'probe-held');

async function start(components: Components = {}, store: Record<string, unknown> = {}): Promise<TestServer> {
  return startObjectServer(await storeArgs('sqlite', store),
    { SessionService: { websocket_address: '127.0.0.1', websocket_port: 0 }, ...components }, [OBJECTS_PROBE, PROBE]);
}

interface Seen { type: string; key: string; run: number; step: string }

/** A client that records every pushed ph.* frame (and replies it got) in arrival order. */
async function connect(): Promise<{ c: GsfClient; sid: number; seen: Seen[] }> {
  const c = await GsfClient.connect({ url: `ws://127.0.0.1:${activeSessions!.listener.port}`, version: '1.0.0', codec: 'json' });
  const seen: Seen[] = [];
  for (const type of ['ph.send', 'ph.broadcast', 'ph.publish']) c.on<Seen>(type, (b) => void seen.push({ ...b, type }));
  const { sid } = await c.request<{ sid: number }>('ph.ping', { key: 'hello' });
  return { c, sid, seen };
}

async function account(name: string, coins = 0): Promise<string> {
  const id = await transact((tx) => tx.create('ProbeAccount', { name, coins }).id);
  await transact((tx) => tx.fetch('ProbeAccount', id)); // cached: fetchCached answers
  return id;
}

async function coinsOf(id: string): Promise<number> {
  return (await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins');
}

function payload(s: TestServer, id: string, key: string, steps: Step[], sid?: number): HeldPayload {
  return { id, key, file: path.join(s.dir, 'held.jsonl'), sid, steps };
}

function notes(s: TestServer, key: string): HeldNote[] {
  return readNotes<HeldNote>(path.join(s.dir, 'held.jsonl')).filter((n) => n.key === key);
}

const children = (s: TestServer, key: string): string[] => notes(s, key).filter((n) => n.label === 'child').map((n) => n.from!).sort();
const runsOf = (s: TestServer, key: string): number[] => notes(s, key).filter((n) => n.label === 'run').map((n) => n.run!);

/** Connects a session whose async opened handler runs `steps` (the script is removed once it is open). */
async function connectOpening(id: string, key: string, steps: Step[]): Promise<Awaited<ReturnType<typeof connect>>> {
  fs.writeFileSync(OPEN_SCRIPT, JSON.stringify({ ...payload(s, id, key, steps), async: true }));
  try {
    return await connect();
  } finally {
    fs.rmSync(OPEN_SCRIPT, { force: true });
  }
}

let s: TestServer;
test.before(async () => {
  s = await start();
});
test.after.always(async () => {
  await s?.stop();
  fs.rmSync(OPEN_SCRIPT, { force: true });
  fs.rmSync(CLOSE_SCRIPT, { force: true });
});

// Session opened/closed handlers run in their event (the engine event `_session.opened` /
// `_session.closed`) and in its async context: after an await `api.objects`, sends, counters and
// invokes still belong to the event.

test.serial('async session-opened handler: after an await its object changes belong to its event and commit', async (t) => {
  const id = await account('open-await');
  const key = 'open-await';
  const { c, seen } = await connectOpening(id, key, [{ do: 'await' }, { do: 'fetch' }, { do: 'add' }, { do: 'send' }]);
  try {
    await idle();
    await c.request('ph.ping', { key: 'after' });
    t.false(s.logs().some((l) => l.includes("session-opened handler") && l.includes('needs a running event')),
      'api.objects after an await in an async opened handler must find its event');
    t.is(await coinsOf(id), 1);
    t.deepEqual(seen.filter((f) => f.key === key).map((f) => f.run), [1]);
  } finally {
    await c.close();
  }
});

test.serial('async session-opened handler rerun after a conflict: the conflicting run\'s sends, counter changes and children are dropped', async (t) => {
  const id = await account('open-rerun');
  const key = 'open-rerun';
  // Sync part: fetch (cached) and change the account; then a transaction of its own changes it too
  // (its first run only), so the event's commit conflicts and the handler runs again.
  const steps: Step[] = [{ do: 'fetch' }, { do: 'add' }, { do: 'conflict', times: 1 },
    { do: 'send' }, { do: 'count', name: 'c' }, { do: 'invoke' }];
  const { c, seen } = await connectOpening(id, key, steps);
  try {
    await waitFor(() => children(s, key).length >= 1, 10000, 'a child');
    await idle();
    await c.request('ph.ping', { key: 'after' });
    t.deepEqual(runsOf(s, key), [1, 2]);
    t.is(await coinsOf(id), 101);
    t.log('sends', seen.filter((f) => f.key === key).map((f) => f.run), 'counter', counter('ph', `${key}_c`), 'children', children(s, key));
    // Only the committed run (2) may be seen; today run 1's send, counter change and child leak.
    t.deepEqual(seen.filter((f) => f.key === key).map((f) => f.run), [2]);
    t.is(counter('ph', `${key}_c`), 1);
    t.deepEqual(children(s, key), ['invoke@2']);
  } finally {
    await c.close();
  }
});

test.serial('async session-closed handler: after an await its object changes belong to its event and commit', async (t) => {
  const id = await account('close-await');
  const key = 'close-await';
  const { c } = await connect();
  fs.writeFileSync(CLOSE_SCRIPT, JSON.stringify({ ...payload(s, id, key, [{ do: 'await' }, { do: 'fetch' }, { do: 'add' }, { do: 'count', name: 'c' }]), async: true }));
  try {
    await c.close();
    await waitFor(() => runsOf(s, key).length > 0, 10000, 'the closed handler to run');
    await idle();
  } finally {
    fs.rmSync(CLOSE_SCRIPT, { force: true });
  }
  t.false(s.logs().some((l) => l.includes("session-closed handler") && l.includes('needs a running event')),
    'api.objects after an await in an async closed handler must find its event');
  t.is(await coinsOf(id), 1);
  t.is(counter('ph', `${key}_c`), 1);
});
