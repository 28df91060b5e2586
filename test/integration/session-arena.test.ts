/**
 * The example game's client protocol (hello, join, leave, say, click, top, profile; pushes
 * joined and chat), run against both games: the TypeScript one (plugins/arena) and the C++ one
 * (plugins/arena-native). Every case gets the same exact answers from both.
 */
import test from 'ava';
import { CloseCode, type GsfClient } from '../../src/sdk/index.ts';
import { startSessionServer, type SessionServer } from './_session.ts';
import { GAMES, arenaPlugins, type Game } from './_arena-games.ts';

const clicks = (c: GsfClient, n: number): Promise<Array<{ score: number; total: number }>> =>
  Promise.all(Array.from({ length: n }, () => c.request<{ score: number; total: number }>('click')));

/** The first push of `type` from now on whose body passes `match`. */
function pushed<B>(c: GsfClient, type: string, match: (body: B) => boolean): Promise<B> {
  return new Promise((resolve) => {
    const off = c.on<B>(type, (body) => {
      if (!match(body)) return;
      off();
      resolve(body);
    });
  });
}

async function withArena(game: Game, fn: (s: SessionServer) => Promise<void>): Promise<void> {
  const s = await startSessionServer({}, arenaPlugins(game));
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}

for (const game of GAMES) {
  test.serial(`[${game}] two players log in, chat in a room, click in order, read the leaderboard; a second login replaces`, (t) => withArena(game, async (s) => {
    const ada = await s.connect('json');
    const grace = await s.connect('msgpack');
    t.deepEqual(await ada.request('hello', { name: 'ada' }), { name: 'ada', room: 'lobby' });
    t.deepEqual(await grace.request('hello', { name: 'grace' }), { name: 'grace', room: 'lobby' });
    t.deepEqual(await grace.request('join', { room: 'duel' }), { room: 'duel' });
    const chat = grace.next('chat');
    t.deepEqual(await ada.request('say', { room: 'lobby', text: 'hi' }), { room: 'lobby' });
    t.deepEqual((await chat).body, { room: 'lobby', from: 'ada', text: 'hi' });
    t.deepEqual((await clicks(ada, 30)).map((c) => c.score), Array.from({ length: 30 }, (_, i) => i + 1));
    await grace.request('click');
    t.deepEqual(await grace.request('top'), { leaders: [{ name: 'ada', score: 30 }, { name: 'grace', score: 1 }], total: 31 });
    const err = await t.throwsAsync(s.connect('json').then((c) => c.request('say', { room: 'lobby', text: 'anon' })));
    t.is(err.message, "the handler of 'say' failed");
    const ada2 = await s.connect('json');
    await ada2.request('hello', { name: 'ada' });
    t.deepEqual(await ada.closed, { code: CloseCode.replaced, reason: "account 'ada' logged in from another session" });
    t.is((await ada2.request<{ score: number }>('click')).score, 31);
    await Promise.all([grace.close(), ada2.close()]);
  }));

  test.serial(`[${game}] rooms: joined pushes, names cut and trimmed, leave stops the chat; hello needs a name`, (t) => withArena(game, async (s) => {
    const ada = await s.connect('msgpack');
    const grace = await s.connect('json');
    const name = `  ${'x'.repeat(40)} `;
    t.deepEqual(await ada.request('hello', { name: 'ada' }), { name: 'ada', room: 'lobby' });
    const arrival = pushed<{ name: string }>(ada, 'joined', (b) => b.name === 'grace');
    t.deepEqual(await grace.request('hello', { name: 'grace' }), { name: 'grace', room: 'lobby' });
    t.deepEqual(await arrival, { room: 'lobby', name: 'grace' });
    const joined = pushed<{ room: string }>(grace, 'joined', (b) => b.room !== 'lobby');
    t.deepEqual(await ada.request('join', { room: name }), { room: 'x'.repeat(32) });
    t.deepEqual(await grace.request('join', { room: 'x'.repeat(32) }), { room: 'x'.repeat(32) });
    t.deepEqual(await joined, { room: 'x'.repeat(32), name: 'grace' });
    // No room, or an empty one, is the lobby.
    t.deepEqual(await ada.request('say', { text: 'to the lobby' }), { room: 'lobby' });
    t.deepEqual((await grace.next('chat')).body, { room: 'lobby', from: 'ada', text: 'to the lobby' });
    t.deepEqual(await grace.request('leave', { room: ` ${'x'.repeat(32)} ` }), { room: 'x'.repeat(32) });
    const next = grace.next('chat');
    await ada.request('say', { room: 'x'.repeat(32), text: 'not heard' });
    await ada.request('say', { room: 'lobby', text: 'y'.repeat(600) });
    t.deepEqual((await next).body, { room: 'lobby', from: 'ada', text: 'y'.repeat(500) });
    for (const body of [{}, { name: '   ' }, { name: 7 }]) {
      const err = await t.throwsAsync(s.connect('json').then((c) => c.request('hello', body)));
      t.is(err.message, "the handler of 'hello' failed");
    }
    const anon = await s.connect('json');
    await t.throwsAsync(anon.request('join', { room: 'duel' }), { message: "the handler of 'join' failed" });
    await t.throwsAsync(anon.request('profile'), { message: "the handler of 'profile' failed" });
    await Promise.all([ada.close(), grace.close(), anon.close()]);
  }));

  test.serial(`[${game}] profile: levels every 10 points, a potion every 25, the daily medal and a broadcast at 100`, (t) => withArena(game, async (s) => {
    const ada = await s.connect('json');
    const grace = await s.connect('msgpack');
    await ada.request('hello', { name: 'ada' });
    await grace.request('hello', { name: 'grace' });
    t.deepEqual(await ada.request('profile'), { name: 'ada', score: 0, character: { nickname: 'ada', level: 1 }, inventory: {} });
    await clicks(ada, 25);
    t.deepEqual(await ada.request('profile'), { name: 'ada', score: 25, character: { nickname: 'ada', level: 3 }, inventory: { potion: 1 } });
    const shout = grace.next('chat');
    const last = await clicks(ada, 75);
    t.deepEqual(last.at(-1), { score: 100, total: 100 });
    t.deepEqual((await shout).body, { room: '*', from: 'arena', text: 'ada reached 100!' });
    t.deepEqual(await ada.request('profile'), { name: 'ada', score: 100, character: { nickname: 'ada', level: 11 }, inventory: { potion: 4, medal: 1 } });
    t.deepEqual(await grace.request('top'), { leaders: [{ name: 'ada', score: 100 }, { name: 'grace', score: 0 }], total: 100 });
    await Promise.all([ada.close(), grace.close()]);
  }));
}
