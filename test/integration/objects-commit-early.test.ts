/**
 * A handler that commits its own transaction (`api.objects.transaction().commit()`, in the call
 * table of docs/guides/objects.md) and then returns: its changes are stored, and the event ends
 * as any other (it failed with "the transaction has already been committed or discarded", and
 * its client was told its request failed although the data was durable). So does a synchronous
 * handler that starts the commit and returns without awaiting it: its event ends with that commit.
 */
import test from 'ava';
import path from 'node:path';
import { transact } from '../../src/objects/plugin-api.ts';
import { native } from '../../src/native.ts';
import { GsfClient } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { fixtures, type TestServer } from './_server.ts';
import { idle, OBJECTS_PROBE, readNotes, startObjectServer, storeArgs } from './_objects.ts';

const PLUGIN = path.join(fixtures, 'plugins', 'objects-commit-early');
let s: TestServer;
test.before(async () => {
  s = await startObjectServer(await storeArgs('sqlite'), { SessionService: { websocket_address: '127.0.0.1', websocket_port: 0 } },
    [OBJECTS_PROBE, PLUGIN]);
});
test.after.always(async () => { await s?.stop(); });

test.serial('sqlite: an event that commits its transaction itself and returns does not fail', async (t) => {
  const file = path.join(s.dir, 'early.jsonl');
  const failed = s.server.dispatcher.totals.failed;
  s.server.invoke('pobj.commit_early', { name: 'early', file });
  await idle();
  t.deepEqual(readNotes(file), [{ label: 'committed', ok: true }]);
  native.objCacheClear();
  t.truthy(await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'early')), 'the change is stored');
  t.is(s.server.dispatcher.totals.failed, failed, 'the event did not fail');
  t.false(s.logs().some((l) => l.includes('commit: the transaction has already been committed or discarded')));
});

test.serial('sqlite: a client handler that commits itself gets its reply, not a failure', async (t) => {
  const c = await GsfClient.connect({ url: `ws://127.0.0.1:${activeSessions!.listener.port}`, version: '1.0.0', codec: 'json' });
  try {
    const answer = await c.request('pobj.commit_early', { name: 'early-client' }, 5000).catch((err: Error) => `failed: ${err.message}`);
    native.objCacheClear();
    t.truthy(await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'early-client')), 'the change is stored');
    t.deepEqual(answer, { committed: true });
  } finally {
    await c.close();
  }
});

test.serial('sqlite: a synchronous handler that starts the commit without awaiting it: stored, the event does not fail', async (t) => {
  const failed = s.server.dispatcher.totals.failed;
  s.server.invoke('pobj.commit_unawaited', { name: 'unawaited' });
  await idle();
  native.objCacheClear();
  t.truthy(await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'unawaited')), 'the change is stored');
  t.is(s.server.dispatcher.totals.failed, failed, 'the event did not fail');
  t.false(s.logs().some((l) => l.includes('commit: the transaction has already been committed or discarded')));
});

test.serial('sqlite: a client handler that starts the commit without awaiting it gets its reply', async (t) => {
  const c = await GsfClient.connect({ url: `ws://127.0.0.1:${activeSessions!.listener.port}`, version: '1.0.0', codec: 'json' });
  try {
    const answer = await c.request('pobj.commit_unawaited', { name: 'unawaited-client' }, 5000).catch((err: Error) => `failed: ${err.message}`);
    t.deepEqual(answer, { started: true });
    native.objCacheClear();
    t.truthy(await transact((tx) => tx.fetchBy('ProbeAccount', 'name', 'unawaited-client')), 'the change is stored');
  } finally {
    await c.close();
  }
});
