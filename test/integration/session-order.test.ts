import test from 'ava';
import type { GsfClient } from '../../src/sdk/index.ts';
import { startSessionServer } from './_session.ts';
import { GAMES, arenaPlugins } from './_arena-games.ts';

/**
 * Sends `count` requests made by `make(i)` with at most `window` in flight, as a pipelining
 * client does, and returns the order in which their replies arrived.
 */
async function pipeline(client: GsfClient, count: number, window: number,
  make: (i: number) => [string, unknown]): Promise<number[]> {
  const arrived: number[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const [type, body] = make(i);
      await client.request(type, body, 30_000);
      arrived.push(i);
    }
  };
  await Promise.all(Array.from({ length: window }, lane));
  return arrived;
}

/** Positions where a number arrived before a smaller one. */
function outOfOrder(seq: readonly number[]): number {
  let n = 0;
  for (let i = 1; i < seq.length; i++) if (seq[i]! < seq[i - 1]!) n++;
  return n;
}

const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

for (const threads of [2, 4]) {
  test.serial(`awaiting handlers, ${threads} event threads: a session's replies, publishes and sends leave in order`, async (t) => {
    const s = await startSessionServer({ EventDispatcher: { event_threads_size: threads } });
    try {
      const sender = await s.connect('json');
      const watcher = await s.connect('msgpack');
      const { sessionId: watcherId } = await watcher.request<{ sessionId: number }>('whoami');
      await sender.request('group', { group: 'room', join: true });
      await watcher.request('group', { group: 'room', join: true });
      const published: number[] = [], sent: number[] = [], echoed: number[] = [];
      watcher.on<{ n: number }>('aseq.published', (b) => published.push(b.n));
      watcher.on<{ n: number }>('aseq.sent', (b) => sent.push(b.n));
      sender.on<{ n: number }>('aseq.published', (b) => echoed.push(b.n));
      const count = 1000;
      const replies = await pipeline(sender, count, 40, (n) => ['aseq', { n, group: 'room', to: watcherId }]);
      // The sender's own reply to the last request comes after every publish it made.
      await watcher.request('whoami');
      t.is(outOfOrder(replies), 0, 'replies');
      t.deepEqual(replies, upTo(count));
      t.deepEqual(echoed, upTo(count), 'publishes seen by the sender');
      t.deepEqual(published, upTo(count), 'publishes seen by another session');
      t.deepEqual(sent, upTo(count), 'sends');
      await Promise.all([sender.close(), watcher.close()]);
    } finally {
      await s.stop();
    }
  });
}

for (const game of GAMES) {
  test.serial(`[${game}] arena, 2 event threads: pipelined say lines reach the room in order, and their replies too`, async (t) => {
    const s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } }, arenaPlugins(game));
    try {
      const ada = await s.connect('json');
      const grace = await s.connect('msgpack');
      await ada.request('hello', { name: 'ada' });
      await grace.request('hello', { name: 'grace' });
      const heard: number[] = [];
      grace.on<{ from: string; text: string }>('chat', (b) => { if (b.from === 'ada') heard.push(Number(b.text)); });
      const count = 600;
      const replies = await pipeline(ada, count, 40, (i) => ['say', { room: 'lobby', text: String(i) }]);
      t.deepEqual(replies, upTo(count));
      await grace.request('top');
      t.deepEqual(heard, upTo(count));
      await Promise.all([ada.close(), grace.close()]);
    } finally {
      await s.stop();
    }
  });
}
