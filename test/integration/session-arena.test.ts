import test from 'ava';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CloseCode } from '../../src/sdk/index.ts';
import { startSessionServer } from './_session.ts';

test.serial('arena: two players log in, chat in a room, click in order, read the leaderboard; a second login replaces', async (t) => {
  const s = await startSessionServer({}, [path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'arena')]);
  try {
    const ada = await s.connect('json');
    const grace = await s.connect('msgpack');
    t.deepEqual(await ada.request('hello', { name: 'ada' }), { name: 'ada', room: 'lobby' });
    t.deepEqual(await grace.request('hello', { name: 'grace' }), { name: 'grace', room: 'lobby' });
    t.deepEqual(await grace.request('join', { room: 'duel' }), { room: 'duel' });
    const chat = grace.next('chat');
    t.deepEqual(await ada.request('say', { room: 'lobby', text: 'hi' }), { room: 'lobby' });
    t.deepEqual((await chat).body, { room: 'lobby', from: 'ada', text: 'hi' });
    const clicks = await Promise.all(Array.from({ length: 30 }, () => ada.request<{ score: number }>('click')));
    t.deepEqual(clicks.map((c) => c.score), Array.from({ length: 30 }, (_, i) => i + 1));
    await grace.request('click');
    t.deepEqual(await grace.request('top'), { leaders: [{ name: 'ada', score: 30 }, { name: 'grace', score: 1 }], total: 31 });
    const err = await t.throwsAsync(s.connect('json').then((c) => c.request('say', { room: 'lobby', text: 'anon' })));
    t.is(err.message, "the handler of 'say' failed");
    const ada2 = await s.connect('json');
    await ada2.request('hello', { name: 'ada' });
    t.deepEqual(await ada.closed, { code: CloseCode.replaced, reason: "account 'ada' logged in from another session" });
    t.is((await ada2.request<{ score: number }>('click')).score, 31);
    await Promise.all([grace.close(), ada2.close()]);
  } finally {
    await s.stop();
  }
});
