/**
 * The C++ arena (plugins/arena-native) answers as the TypeScript arena does where the two used to
 * differ: leaderboard ties among ASCII names with a tab or another control character are ordered
 * as localeCompare orders them, and a msgpack body that repeats a key is read by its last value
 * (gsf_mp_map_find), as msgpackr reads it.
 */
import test from 'ava';
import type { WebSocket } from 'ws';
import type { GsfClient } from '../../src/sdk/index.ts';
import { startConsoleServer, type ConsoleServer } from './_console.ts';

async function withNativeArena(fn: (s: ConsoleServer) => Promise<void>): Promise<void> {
  const s = await startConsoleServer(false, {}, 'native');
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}
const raw = (c: GsfClient): WebSocket => (c as unknown as { ws: WebSocket }).ws;
/** A msgpack fixstr. */
const str = (s: string): number[] => [0xa0 | Buffer.byteLength(s), ...Buffer.from(s)];

// docs/guides/native-plugins.md: "ties on the leaderboard are ordered as `localeCompare` orders
// ASCII names"; plugins/arena/index.ts sorts by `x.name.localeCompare(y.name)`. Tab and U+0001 are
// ASCII and hello accepts them inside a name.
test.serial('[native] leaderboard ties among ASCII names holding a tab or a control character are ordered as localeCompare orders them', (t) => withNativeArena(async (s) => {
  const names = ['ab', 'a\u0001a', 'a b', 'a\tb'];
  const players = await Promise.all(names.map((n) => s.player(n)));
  const top = await players[0]!.request<{ leaders: Array<{ name: string; score: number }> }>('top');
  t.deepEqual([...names].sort((x, y) => x.localeCompare(y)), ['a\tb', 'a b', 'a\u0001a', 'ab']);
  t.deepEqual(top.leaders, [
    { name: 'a\tb', score: 0 }, { name: 'a b', score: 0 }, { name: 'a\u0001a', score: 0 }, { name: 'ab', score: 0 },
  ]);
}));

// The TypeScript arena reads the body as msgpackr decodes it: a repeated key keeps its last value
// (and a JSON session's body reaches the native game that way too: native-plugins.md, "a repeated
// key keeps its first place and last value"). The same msgpack client must log in as the same account.
test.serial('[native] a msgpack hello whose body repeats name logs in as the last value, as the TypeScript arena does', (t) => withNativeArena(async (s) => {
  const m = await s.connect('msgpack');
  const reply = m.next('hello');
  // {type: 'hello', id: 999, body: {name: 'bob', name: 'cat'}}
  raw(m).send(Buffer.from([0x83, ...str('type'), ...str('hello'), ...str('id'), 0xcd, 0x03, 0xe7,
    ...str('body'), 0x82, ...str('name'), ...str('bob'), ...str('name'), ...str('cat')]));
  t.deepEqual((await reply).body, { name: 'cat', room: 'lobby' });
  const j = await s.connect();
  const jr = j.next('hello');
  raw(j).send('{"type":"hello","id":999,"body":{"name":"bob","name":"cat"}}');
  t.deepEqual((await jr).body, { name: 'cat', room: 'lobby' }); // the JSON session: already the last value
}));
