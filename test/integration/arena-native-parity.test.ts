/**
 * The C++ arena (plugins/arena-native) answers as the TypeScript arena does where the two used to
 * differ: leaderboard ties among ASCII names with a tab or another control character are ordered
 * as localeCompare orders them.
 */
import test from 'ava';
import { startConsoleServer, type ConsoleServer } from './_console.ts';

async function withNativeArena(fn: (s: ConsoleServer) => Promise<void>): Promise<void> {
  const s = await startConsoleServer(false, {}, 'native');
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}

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
