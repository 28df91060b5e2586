/**
 * ABI 1.2 in a real server with real SQLite: a native plugin creates, deletes and reads objects
 * from the cache, runs transactions of its own (from on_start and from an event), defines a flag
 * (read and set over REST), registers a callable counter (REST and /metrics) and monitors a
 * counter. Every piece of user data it hands gsf is released exactly once (made === dropped).
 */
import test from 'ava';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { unpack } from 'msgpackr';
import { createRequire } from 'node:module';
import { native, nativeTesting } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';

const require = createRequire(import.meta.url);
const PROBE = path.join(fixtures, 'native-plugins', 'native-results');
const value = (name: string): number => native.counterValue('results', name) ?? 0;
const commits = (): number => native.counterValue('object_database_stat', 'sqlite/committed_events') ?? 0;

let s: TestServer;
let api: string;

/** The first log line of the probe that starts with `prefix` after line `from`. */
const line = (prefix: string, from = 0): Promise<string> =>
  waitFor(() => s.logs().slice(from).find((l) => l.includes(`native-results: ${prefix}`)), 10000, prefix);

test.before(async () => {
  s = await startTestServer({
    EventDispatcher: { event_threads_size: 2 },
    RuntimeConfiguration: { additional_configurations: ['native_bonus'] },
    CounterService: { counter_monitoring_interval_in_sec: 1 },
  }, ['objects-probe', PROBE]);
  api = `http://127.0.0.1:${s.server.api.port}`;
});

test.after.always(async () => {
  await s?.stop();
});

test.serial('on_start runs a transaction of its own: its object is committed and its done hears OK', async (t) => {
  const done = await line('transaction tx-start ');
  t.true(done.includes('status=OK code= id= number=0'), done);
  t.is(value('tx_runs'), 1);
  // A transaction from an event fetches it (from the database), adds 1 and commits: the cache then holds it.
  await waitFor(() => commits() >= 1, 10000, 'the commit of on_start\'s transaction');
  const before = s.logs().length, committed = commits();
  s.server.invoke('results.add', 'tx-start');
  t.true((await line('transaction tx-start ', before)).includes('status=OK'));
  await waitFor(() => commits() > committed, 10000, 'the commit of the transaction');
  const at = s.logs().length;
  s.server.invoke('results.read', 'tx-start');
  t.is((await line('read ', at)).split('native-results: ')[1], 'read status=OK coins=6');
});

test.serial('object_read_cached answers from the cache on a thread whose JavaScript never touched objects', async (t) => {
  // A fresh thread loads the addon and reads as a native plugin's first call on an event thread
  // would: the types come from the store's registration on another thread.
  const addon = path.join(path.dirname(require.resolve('../../package.json')), 'build', 'addon', 'Release', 'gsf_native_testing.node');
  const code = `const { parentPort, workerData } = require('node:worker_threads');
    const a = require(workerData.addon);
    parentPort.postMessage([a.objectReadCached('ProbeAccount', 'tx-start'), a.objectReadCached('ProbeAccount', 'nobody'), a.objectReadCached('NoSuchType', 'x')]);`;
  const got = await new Promise<Array<{ code: number; fields?: Uint8Array }>>((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { addon } });
    w.once('message', (m) => { resolve(m as Array<{ code: number; fields?: Uint8Array }>); void w.terminate(); });
    w.once('error', reject);
  });
  t.is(got[0]!.code, 0);
  t.like(unpack(got[0]!.fields!) as Record<string, unknown>, { coins: 6 });
  t.deepEqual(got.slice(1).map((r) => r.code), [2, 3]); // a miss is not an answer; an unknown type is
  // This thread reads the same.
  t.like(unpack(nativeTesting().objectReadCached('ProbeAccount', 'tx-start').fields!) as Record<string, unknown>, { coins: 6 });
});

test.serial('object_create commits the object; a second create of its id in the event is CONFLICT (GSF_ERR_OBJECT_STATE)', async (t) => {
  const at = s.logs().length, committed = commits();
  s.server.invoke('results.create', ['acc-1', 'alice']);
  const created = await line('create status', at);
  t.true(created.includes('status=OK code= id=acc-1 number=0 coins=3'), created);
  const again = await line('create again', at);
  t.true(again.includes('status=CONFLICT code=GSF_ERR_OBJECT_STATE id= '), again);
  t.true(again.includes("ProbeAccount 'acc-1' already exists in this event"), again);
  await waitFor(() => commits() > committed, 10000, 'the commit of the create');
  // The event committed: a transaction of its own adds to the coins it was created with.
  const before = s.logs().length;
  s.server.invoke('results.add', 'acc-1');
  const added = await line('transaction acc-1', before);
  t.true(added.includes('status=OK'), added);
  await waitFor(() => commits() > committed + 1, 10000, 'the commit of the transaction');
  const after = s.logs().length;
  s.server.invoke('results.read', 'acc-1');
  t.is((await line('read ', after)).split('native-results: ')[1], 'read status=OK coins=4');
  // An id the cache does not hold: only the database can tell.
  const none = s.logs().length;
  s.server.invoke('results.read', 'never-made');
  t.is((await line('read ', none)).split('native-results: ')[1], 'read status=UNAVAILABLE coins=-1');
});

test.serial('object_delete deletes a fetched object; the cache then knows it is gone (NOT_FOUND)', async (t) => {
  const at = s.logs().length, committed = commits();
  s.server.invoke('results.create', ['acc-2', 'bob']);
  await line('create status', at);
  await waitFor(() => commits() > committed, 10000, 'the commit of the create');
  const del = s.logs().length;
  s.server.invoke('results.delete', 'acc-2');
  await line('delete asked', del);
  await waitFor(() => commits() > committed + 1, 10000, 'the commit of the delete');
  const from = s.logs().length;
  s.server.invoke('results.read', 'acc-2');
  t.is((await line('read ', from)).split('native-results: ')[1], 'read status=NOT_FOUND coins=-1');
  // A transaction on the deleted object: its body fails (NOT_FOUND), done hears it.
  const tx = s.logs().length;
  s.server.invoke('results.add', 'acc-2');
  const failed = await line('transaction acc-2', tx);
  t.true(failed.includes('status=INTERNAL code=GSF_ERR_HANDLER_FAILED'), failed);
  t.true(failed.includes('NOT_FOUND'), failed);
});

test.serial('a flag defined natively is read with flag_get, listed and set over REST', async (t) => {
  const got = await (await fetch(`${api}/v1/configurations/native_bonus`)).json();
  t.deepEqual(got, { native_bonus: { type: 'int32', desc: 'a bonus a native plugin defines', value: '7' } });
  t.is((await fetch(`${api}/v1/configurations/native_bonus/11`, { method: 'PUT' })).status, 200);
  t.is(s.server.thread.flags.get('native_bonus'), 11);
  t.is((await fetch(`${api}/v1/configurations/native_bonus/x`, { method: 'PUT' })).status, 400);
});

test.serial('a callable counter computed by the plugin is read over REST and /metrics; a monitor warns above its threshold', async (t) => {
  t.is((await fetch(`${api}/v1/counters/results/computed/`)).status, 204);
  s.server.invoke('results.compute', 21);
  await waitFor(() => value('load') === 21, 10000, 'results/load');
  const body = await (await fetch(`${api}/v1/counters/results/computed/`)).json() as { value: number };
  t.is(body.value, 42);
  const metrics = await (await fetch(`${api}/metrics`)).text();
  t.true(metrics.includes('gsf_plugin_value{category="results",name="computed"} 42\n'));
  const warn = await waitFor(() => s.logs().find((l) => l.includes("The 'load of results' counter exceeded threshold")), 10000, 'the monitor');
  t.true(warn.includes('value=21, threshold=5'), warn);
});

test.serial('at shutdown every piece of user data the plugin handed gsf was released once', async (t) => {
  await s.stop();
  t.true(value('made') >= 6);
  t.is(value('dropped'), value('made'));
  t.deepEqual(native.pluginResultHoldings(), [0, 0]);
});
