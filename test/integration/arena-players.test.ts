/**
 * Both example games (plugins/arena, plugins/arena-native) played as an impatient player would:
 * switching names on one session, dropping the socket right after hello, names that cannot be
 * stored, text cut inside an emoji; and where the two games must agree (leaderboard ties, body
 * fields of other types).
 */
import test from 'ava';
import type { WebSocket } from 'ws';
import { native } from '../../src/native.ts';
import type { GsfClient } from '../../src/sdk/index.ts';
import { GAMES, arenaPluginName, type Game } from './_arena-games.ts';
import { startConsoleServer, type ConsoleServer } from './_console.ts';
import { waitFor } from './_server.ts';

async function withArena(game: Game, fn: (s: ConsoleServer) => Promise<void>): Promise<void> {
  const s = await startConsoleServer(game === 'managed', {}, game);
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}

/** Ends the socket without a close handshake (a dropped connection). */
const terminate = (c: GsfClient): void => (c as unknown as { ws: WebSocket }).ws.terminate();
const counter = (name: string): number | undefined => (native.counterGet('engine', name) as { value?: number } | null)?.value;
/** What the console answers for GET /cs-api/v1/account/{name}/connection/ (IsLoggedIn). */
const connection = (s: ConsoleServer, name: string): Promise<[number, unknown]> =>
  s.call('GET', `/cs-api/v1/account/${encodeURIComponent(name)}/connection/`).then((r) => [r.status, r.body]);
const failure = (e: unknown): unknown => ({ code: (e as { code?: string }).code, message: (e as Error).message });

for (const game of GAMES) {
  test.serial(`[${game}] a session that says hello as ada, then as bob: once it closes, ada is not shown logged in`, (t) => withArena(game, async (s) => {
    const c = await s.connect();
    t.deepEqual(await c.request('hello', { name: 'ada' }), { name: 'ada', room: 'lobby' });
    t.deepEqual(await c.request('hello', { name: 'bob' }), { name: 'bob', room: 'lobby' });
    t.is(counter('concurrent_user'), 1); // the account manager moved the session to bob
    await c.close();
    await waitFor(async () => (await connection(s, 'bob'))[1] === false, 5000, 'bob logged out');
    t.is(counter('concurrent_user'), 0);
    t.deepEqual(await connection(s, 'ada'), [200, false]);
  }));

  test.serial(`[${game}] a hello whose socket drops at once leaves no player shown logged in`, (t) => withArena(game, async (s) => {
    const names = Array.from({ length: 20 }, (_, i) => `p${i}`);
    for (const name of names) {
      const c = await s.connect();
      c.send('hello', { name });
      terminate(c);
    }
    await waitFor(() => counter('sessions') === 0, 5000, 'sessions to end');
    // Each session's hello and closed events run in order on its tag: all have run once the queue is idle.
    await waitFor(() => native.queueStats().waiting === 0 && native.queueStats().outstanding === 0, 10000, 'an idle queue');
    t.is(counter('concurrent_user'), 0);
    // A hello whose socket went before its login made no player; one that logged in was logged out at close.
    const shown = await Promise.all(names.map((n) => connection(s, n)));
    t.deepEqual(shown.filter(([status, body]) => !(status === 404 || (status === 200 && body === false))), []);
  }));

  test.serial(`[${game}] a hello refused for a NUL in the name is answered, and leaves the session logged out`, (t) => withArena(game, async (s) => {
    const bea = await s.player('bea');
    const c = await s.connect();
    t.deepEqual(failure(await t.throwsAsync(c.request('hello', { name: 'a\u0000b' }, 3000))),
      { code: 'GSF_ERR_MESSAGE_HANDLER_FAILED', message: "the handler of 'hello' failed" });
    t.is(counter('concurrent_user'), 1);
    t.deepEqual(failure(await t.throwsAsync(c.request('say', { text: 'who am i' }, 3000))),
      { code: 'GSF_ERR_MESSAGE_HANDLER_FAILED', message: "the handler of 'say' failed" });
    await bea.close();
  }));
}

for (const game of GAMES) {
  test.serial(`[${game}] leaderboard ties are ordered as localeCompare orders the names`, (t) => withArena(game, async (s) => {
    const names = ['za', '0a', '~a', '_a', '-a', 'Ab', 'a b', 'ab'];
    const players = await Promise.all(names.map((n) => s.player(n)));
    for (const p of players) await p.request('click');
    const top = await players[0]!.request<{ leaders: Array<{ name: string; score: number }> }>('top');
      t.deepEqual(top.leaders, [...names].sort((x, y) => x.localeCompare(y)).slice(0, 5).map((name) => ({ name, score: 1 })));
  }));

  test.serial(`[${game}] names, rooms and chat are cut without splitting a surrogate pair`, (t) => withArena(game, async (s) => {
    const ada = await s.connect();
    t.deepEqual(await ada.request('hello', { name: `${'x'.repeat(23)}😀` }).catch(failure), { name: 'x'.repeat(23), room: 'lobby' });
    const bea = await s.player('bea');
    t.deepEqual(await bea.request('join', { room: `${'y'.repeat(31)}😀` }).catch(failure), { room: 'y'.repeat(31) });
    const chat = bea.next<{ text: string }>('chat');
    t.deepEqual(await bea.request('say', { text: `${'t'.repeat(499)}😀` }), { room: 'lobby' });
    t.is((await chat).body.text, 't'.repeat(499));
  }));

  test.serial(`[${game}] say and join take text and rooms of other types as String() reads them`, (t) => withArena(game, async (s) => {
    const ada = await s.player('ada');
    const bea = await s.player('bea');
    const heard: unknown[] = [];
    for (const text of [123, true, 1.5, { a: 1 }, ['q', null, [2, 3]], 1e-7, -0.000001, 2 ** 60]) {
      const chat = bea.next<{ text: string }>('chat');
      await ada.request('say', { text });
      heard.push((await chat).body.text);
    }
    // String(text) in plugins/arena/index.ts
    t.deepEqual(heard, ['123', 'true', '1.5', '[object Object]', 'q,,2,3', '1e-7', '-0.000001', '1152921504606847000']);
    const rooms: unknown[] = [];
    for (const room of [1.5, ['r'], { x: 1 }, 1e21]) rooms.push(await ada.request('join', { room }));
    // String(room ?? '').trim().slice(0, 32) in plugins/arena/index.ts
    t.deepEqual(rooms, [{ room: '1.5' }, { room: 'r' }, { room: '[object Object]' }, { room: '1e+21' }]);
  }));

  test.serial(`[${game}] msgpack rooms of binary, 64-bit integers and timestamps read as String() reads them`, (t) => withArena(game, async (s) => {
    const ada = await s.connect('msgpack');
    await ada.request('hello', { name: 'ada' });
    const at = new Date(Date.UTC(2026, 10, 28, 12, 34, 56, 789));
    const odd: unknown[] = [new Uint8Array([49, 50, 51]), new Uint8Array(0), 2n ** 60n + 1n, -(2n ** 60n) - 1n, 2n ** 64n - 1n, at, new Date(0),
      new Date(-62198755200000), [new Uint8Array([7]), at]];
    const rooms: unknown[] = [];
    for (const room of odd) rooms.push(await ada.request('join', { room }));
    // String(room ?? '').trim().slice(0, 32) in plugins/arena/index.ts; msgpackr reads 64-bit
    // integers as BigInts, timestamps as Dates (in this process's time zone, as the server's).
    t.deepEqual(rooms, odd.map((room) => ({ room: String(room).trim().slice(0, 32) || 'lobby' })));
  }));

  test.serial(`[${game}] a reload keeps a connected player shown logged in, and the total counts each click once`, (t) => withArena(game, async (s) => {
    const ada = await s.player('ada');
    await ada.request('click');
    t.deepEqual(await connection(s, 'ada'), [200, true]);
    const name = arenaPluginName(game);
    const reload = await s.call('POST', `/v1/plugins/${name}/reload?force=true`);
    t.is(reload.status, 200, reload.text);
    // The new version's start rebuilt the live view from the store: the reload answers once a
    // managed onStart has finished; the C++ game's on_start queues its transaction as an event.
    if (game === 'native') await waitFor(async () => {
      const r = await s.call('GET', `/v1/counters/engine/event/profiling/each/transact.${name}`);
      return r.status === 200 && ((r.body as Record<string, { all_time?: { execution_count?: number } }>)[`transact.${name}`]?.all_time?.execution_count ?? 0) >= 2;
    }, 10000, 'the start transaction after the reload');
    t.deepEqual(await ada.request('click'), { score: 2, total: 2 });
    t.deepEqual(await connection(s, 'ada'), [200, true]);
    await ada.close();
    await waitFor(async () => (await connection(s, 'ada'))[1] === false, 5000, 'ada logged out');
  }));
}
