/**
 * Sessions on two I/O threads (`SessionService.io_threads_size: 2`): what spans sessions works
 * across the threads that own them. (Every other session test also runs with two I/O threads:
 * `GSF_TEST_IO_THREADS=2`, the second pass of `npm test`.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import uWS from 'uWebSockets.js';
import { native } from '../../src/native.ts';
import { CloseCode, type GsfClient } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { ioThreadOf } from '../../src/session/io/io-ids.ts';
import { listenUws } from '../../src/api/main/listen.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer | undefined;

type Line = Record<string, unknown>;
/** The session-probe plugin's lifecycle lines of a server (opened, closed). */
function lifecycle(server: SessionServer): () => Line[] {
  const file = path.join(server.dir, 'sessions.jsonl');
  server.server.thread.flags.set('session_probe_file', file);
  return () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line) : []);
}

test.afterEach.always(async () => {
  await s?.stop();
  s = undefined;
});

/** Connects until at least one session is on each of the two threads; returns [on thread 0, on thread 1, ...others]. */
async function spread(server: SessionServer, codec: 'json' | 'msgpack' = 'json'): Promise<{ c: GsfClient; id: number }[]> {
  const byThread: { c: GsfClient; id: number }[][] = [[], []];
  const others: GsfClient[] = [];
  for (let i = 0; i < 64 && (byThread[0]!.length === 0 || byThread[1]!.length === 0); i++) {
    const c = await server.connect(i % 2 === 0 ? codec : 'msgpack');
    const id = (await c.request<{ sessionId: number }>('whoami')).sessionId;
    byThread[ioThreadOf(id)]!.push({ c, id });
    others.push(c);
  }
  if (byThread[0]!.length === 0 || byThread[1]!.length === 0) throw new Error('the kernel never gave a connection to one of the threads');
  return [byThread[0]![0]!, byThread[1]![0]!, ...[...byThread[0]!.slice(1), ...byThread[1]!.slice(1)]];
}

test.serial('sessions spread over both threads; publishes, broadcasts and sends reach sessions of either', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  t.is(activeSessions!.listener.constructor.name, 'IoSessions');
  const [a, b] = await spread(s);
  t.not(ioThreadOf(a!.id), ioThreadOf(b!.id));
  t.is(activeSessions!.listener.size, activeSessions!.listener.sessionIds().length);
  t.true(activeSessions!.listener.has(a!.id) && activeSessions!.listener.has(b!.id));

  t.true(await a!.c.request('group', { group: 'room', join: true }) !== undefined);
  await b!.c.request('group', { group: 'room', join: true });
  t.is(activeSessions!.listener.groupSize('room'), 2);
  const na = a!.c.next('group.news');
  const nb = b!.c.next('group.news');
  await a!.c.request('publish', { group: 'room', body: { hi: 1 } });
  t.deepEqual((await na).body, { hi: 1 });
  t.deepEqual((await nb).body, { hi: 1 });

  const pushed = b!.c.next('pushed');
  await a!.c.request('push', { to: b!.id, body: { across: true } });
  t.deepEqual((await pushed).body, { across: true });

  const news = [a!.c.next('news'), b!.c.next('news')];
  await b!.c.request('broadcast', { to: [a!.id, b!.id], body: 7 });
  t.deepEqual((await Promise.all(news)).map((m) => m.body), [7, 7]);
  const all = [a!.c.next('news'), b!.c.next('news')];
  await b!.c.request('broadcast', { body: 'all' });
  t.deepEqual((await Promise.all(all)).map((m) => m.body), ['all', 'all']);

  // A member that closes leaves the group on the main thread.
  await b!.c.close();
  await waitFor(() => activeSessions!.listener.groupSize('room') === 1, 10000, 'the closed member to leave');
  t.false(activeSessions!.listener.has(b!.id));
});

test.serial('a login on one thread replaces the session of the same account on the other (4009), and the closed event names the account', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const lines = lifecycle(s);
  const [a, b] = await spread(s);
  t.deepEqual(await a!.c.request('login', { account: 'ada' }), { ok: true, replaced: null });
  t.deepEqual(await b!.c.request('locate', { account: 'ada' }), { session: a!.id, loggedIn: true });
  t.deepEqual(await b!.c.request('login', { account: 'ada' }), { ok: true, replaced: a!.id });
  t.deepEqual(await a!.c.closed, { code: CloseCode.replaced, reason: "account 'ada' logged in from another session" });
  await b!.c.close();
  await waitFor(() => native.counterReadInt('engine', 'concurrent_user') === 0, 10000, 'logout on close');
  const closed = await waitFor(() => lines().find((r) => r.what === 'closed' && r.sessionId === b!.id), 10000, 'the closed line');
  t.like(closed, { account: 'ada', code: 1000, tag: b!.id });
  // The replaced session no longer held the account when it closed.
  t.like(lines().find((r) => r.what === 'closed' && r.sessionId === a!.id), { code: CloseCode.replaced, account: null });
});

test.serial('a session logs in with its first message, on either thread: the main thread knows it before its events run', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const clients = await Promise.all(Array.from({ length: 24 }, (_, i) => s!.connect(i % 2 === 0 ? 'json' : 'msgpack')));
  const results = await Promise.all(clients.map((c, i) => c.request('login', { account: `player-${i}` })));
  t.deepEqual(results, clients.map(() => ({ ok: true, replaced: null })));
  t.is(native.counterReadInt('engine', 'concurrent_user'), 24);
  const threads = new Set(await Promise.all(clients.map(async (c) => ioThreadOf((await c.request<{ sessionId: number }>('whoami')).sessionId))));
  t.log(`sessions on threads ${[...threads].join(', ')}`);
  await Promise.all(clients.map((c) => c.close()));
  await waitFor(() => native.counterReadInt('engine', 'concurrent_user') === 0, 10000, 'every logout');
  t.is(native.counterReadInt('engine', 'sessions'), 0);
});

test.serial('a kick closes the session on its own thread; counts add up over the threads', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const clients = await spread(s);
  const stats = activeSessions!.listener.stats;
  t.is(stats.opened, clients.length);
  const before = stats.messages;
  for (const { c } of clients) await c.request('echo', 1);
  t.is(stats.messages, before + clients.length);
  t.is(native.counterReadInt('engine', 'sessions'), clients.length);
  const [a] = clients;
  a!.c.send('kick', { reason: 'bye' });
  t.deepEqual(await a!.c.closed, { code: CloseCode.closedByServer, reason: 'bye' });
  await waitFor(() => native.counterReadInt('engine', 'sessions') === clients.length - 1, 10000, 'the sessions counter');
  t.is(stats.closed, 1);
});

test.serial('the server stops with sessions open on both threads: each gets 1001 and its closed event', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const lines = lifecycle(s);
  const clients = await spread(s);
  const server = s;
  s = undefined;
  await server.stop();
  for (const { c } of clients) t.is((await c.closed).code, 1001);
  const closed = lines().filter((r) => r.what === 'closed');
  t.deepEqual(closed.map((r) => r.sessionId as number).sort(), clients.map((c) => c.id).sort());
  t.true(closed.every((r) => r.code === 1001 && r.reason === 'server stopping'));
});

test.serial('a fixed port is shared by every thread', async (t) => {
  const probe = await listenUws(uWS.App(), '127.0.0.1', 0, 'probe');
  const port = probe.port;
  probe.close();
  s = await startSessionServer({ SessionService: { io_threads_size: 2, websocket_port: port } });
  t.is(s.wsPort, port);
  const [a, b] = await spread(s);
  t.deepEqual(await a!.c.request('echo', 'x'), 'x');
  t.deepEqual(await b!.c.request('echo', 'y'), 'y');
});

test.serial('io_threads_size above the cores is refused at start', async (t) => {
  const too = os.availableParallelism() + 1;
  const err = await t.throwsAsync(startSessionServer({ SessionService: { io_threads_size: too } }));
  t.is(err.message, `(inline manifest): SessionService.io_threads_size must be at most ${Math.min(64, os.availableParallelism())} (the cores here), got ${too}`);
});
