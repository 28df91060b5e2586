/**
 * An event awaiting its object commit on an event thread that exits (another event there calls
 * process.exit) is abandoned, and its client told so (GSF_ERR_MESSAGE_DROPPED; a route's request
 * 504 GSF_ERR_HANDLER_EVENT_ENDED): its commit is not made either, even when it was already with
 * the writer, waiting for the database (here another SQLite connection holds the write lock).
 * What the client is told and what is stored agree, and the counter change held with the commit
 * (made only with it) is not made.
 */
import test from 'ava';
import path from 'node:path';
import Database from 'better-sqlite3';
import WebSocket from 'ws';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { fixtures, waitFor, type TestServer } from './_server.ts';
import { client } from './_http.ts';
import { counter, idle, OBJECTS_PROBE, startObjectServer, storeArgs } from './_objects.ts';

const PLUGIN = path.join(fixtures, 'plugins', 'objects-thread-exit');
type Env = { type: string; body?: { code?: string; coins?: number }; id?: number };

async function open(port: number): Promise<{ ws: WebSocket; got: Env[] }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/?version=1.0.0&codec=json`);
  const got: Env[] = [];
  ws.on('message', (data: Buffer) => got.push(JSON.parse(data.toString()) as Env));
  await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
  return { ws, got };
}

/** A server with one event thread, an account, and another connection holding the SQLite write lock while `fn` runs. */
async function withLockedServer(fn: (s: TestServer, id: string, locked: Database.Database) => Promise<void>): Promise<void> {
  native.counterUpdate('pox', 'added', 0, false);
  const s = await startObjectServer(await storeArgs('sqlite', { sqlite_busy_timeout_in_ms: 30000 }),
    { EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 60000 }, SessionService: { websocket_address: '127.0.0.1', websocket_port: 0 },
      ApiService: { api_service_handler_timeout_in_ms: 30000 } },
    [OBJECTS_PROBE, PLUGIN]);
  const other = new Database(path.join(s.dir, 'data', 'gsf.sqlite'));
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'abandoned', coins: 0 }).id);
    await fn(s, id, other);
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await s.stop();
  }
}

async function coinsOf(id: string): Promise<number> {
  await idle();
  native.objCacheClear();
  return (await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins');
}

test.serial('sqlite: a client request abandoned while its commit waited for the database: told DROPPED, and nothing is committed', async (t) => {
  await withLockedServer(async (s, id, other) => {
    const port = activeSessions!.listener.port;
    const a = await open(port);
    const b = await open(port);
    const waiting = counter('object', 'outstanding_update_query');
    other.exec('BEGIN IMMEDIATE');
    a.ws.send(JSON.stringify({ type: 'pox.count_add', id: 1, body: { id } }));
    await waitFor(() => counter('object', 'outstanding_update_query') > waiting, 10000, 'the commit to reach the writer');
    b.ws.send(JSON.stringify({ type: 'pox.exit', id: 2 }));
    await waitFor(() => a.got.length >= 1 && b.got.length >= 1, 10000, 'the answers');
    other.exec('ROLLBACK');
    await waitFor(() => counter('object', 'outstanding_update_query') === waiting, 20000, 'the commit to end');
    const coins = await coinsOf(id);
    t.deepEqual(a.got.map((g) => [g.id, g.type === '_error' ? g.body!.code : g.type]), [[1, 'GSF_ERR_MESSAGE_DROPPED']]);
    t.is(s.server.dispatcher.totals.abandoned, 1);
    t.is(coins, 0, 'told GSF_ERR_MESSAGE_DROPPED: nothing committed');
    t.is(counter('pox', 'added'), 0);
    t.is(counter('object', 'commits_after_thread_end'), 0);
    // The server goes on: the same change from another client is made.
    const c = await open(port);
    c.ws.send(JSON.stringify({ type: 'pox.count_add', id: 3, body: { id } }));
    await waitFor(() => c.got.length >= 1, 10000, 'the answer');
    t.deepEqual(c.got, [{ type: 'pox.count_add', id: 3, body: { coins: 1 } }]);
    t.is(await coinsOf(id), 1);
    t.is(counter('pox', 'added'), 1);
    c.ws.close();
    a.ws.close();
    b.ws.close();
  });
});

test.serial('sqlite: a route request abandoned while its commit waited for the database: 504, and nothing is committed', async (t) => {
  await withLockedServer(async (s, id, other) => {
    const port = activeSessions!.listener.port;
    const b = await open(port);
    const http = client(s.server.api.port);
    const waiting = counter('object', 'outstanding_update_query');
    other.exec('BEGIN IMMEDIATE');
    const answer = http.post(`/game/pox/add/${id}`);
    await waitFor(() => counter('object', 'outstanding_update_query') > waiting, 10000, 'the commit to reach the writer');
    b.ws.send(JSON.stringify({ type: 'pox.exit', id: 2 }));
    const r = await answer;
    other.exec('ROLLBACK');
    await waitFor(() => counter('object', 'outstanding_update_query') === waiting, 20000, 'the commit to end');
    const coins = await coinsOf(id);
    t.is(r.status, 504);
    t.is((r.body as { error: string }).error, 'GSF_ERR_HANDLER_EVENT_ENDED');
    t.is(coins, 0, 'answered 504 (event ended): nothing committed');
    t.is(counter('pox', 'added'), 0);
    b.ws.close();
  });
});
