/**
 * The object writer and event threads that come and go (resizes): each event thread that
 * commits opens a BroadcastChannel of its own to the writer; once the thread has ended, the
 * writer lets go of its end of that channel instead of keeping (and serving) it for good.
 */
import { BroadcastChannel } from 'node:worker_threads';
import test from 'ava';
import { publishedConfig } from '../../src/objects/config.ts';
import { waitFor } from './_server.ts';
import { idle, startObjectServer } from './_objects.ts';

test.serial('the object writer lets go of the channels of event threads that ended (resizes)', async (t) => {
  const s = await startObjectServer({}, { EventDispatcher: { event_threads_size: 1 } });
  const instance = publishedConfig()!.instance;
  const names = new Set<string>();
  const hello = new BroadcastChannel(`gsf-objects:${instance}:hello`);
  hello.onmessage = (e) => { names.add((e as MessageEvent).data.channel as string); };
  const opened: BroadcastChannel[] = [];
  try {
    let n = 0;
    // Commits from every thread of the current pool (a thread opens its channel at its first commit).
    const commit = async (): Promise<void> => {
      for (let i = 0; i < 40; i++) s.server.invoke('objp.open', { name: `acct-${n++}`, coins: 1 });
      await idle();
    };
    const resize = async (size: number): Promise<void> => {
      t.deepEqual(s.server.thread.flags.setFromText('event_threads_size', String(size)), { ok: true, value: size });
      await waitFor(() => s.server.dispatcher.size === size && (s.server.dispatcher as unknown as { retiring: Set<unknown> }).retiring.size === 0,
        20000, `the pool of ${size}`);
    };
    await commit();
    // The first pool's thread may have said hello before this test listened: the second pool's are seen.
    const before = names.size;
    await resize(2);
    await commit();
    await waitFor(() => names.size >= before + 1, 10000, 'a hello of the second pool');
    const firstPool = new Set([...names].slice(before));
    for (const size of [1, 2, 1]) {
      await resize(size);
      await commit();
    }
    t.true(names.size >= before + 3, `names seen: ${names.size}`);
    // Channels of the second pool's threads (they ended three resizes ago), then the running
    // thread's (the last hello): requests without operations, which the writer answers without
    // touching the database. Two answers on the live channel, one after the other, mean the
    // writer has had two turns since the requests on the ended ones were posted.
    const answered = new Set<string>();
    const live = [...names].at(-1)!;
    t.false(firstPool.has(live));
    let rid = 900_000;
    const liveAnswers: number[] = [];
    const request = (name: string, onAnswer?: (id: number) => void): void => {
      const c = new BroadcastChannel(name);
      opened.push(c);
      c.onmessage = (e) => {
        const data = (e as MessageEvent).data as unknown;
        if (!Array.isArray(data)) return;
        for (const r of data) {
          if (!Array.isArray(r) || (r[0] as number) < 900_000) continue;
          answered.add(name);
          onAnswer?.(r[0] as number);
        }
      };
      c.postMessage([{ id: rid++, ops: [], owner: 0 }]);
    };
    for (const name of firstPool) request(name);
    request(live, (id) => liveAnswers.push(id));
    await waitFor(() => liveAnswers.length === 1, 10000, 'the running thread\'s channel answered');
    (opened.at(-1)!).postMessage([{ id: rid++, ops: [], owner: 0 }]);
    await waitFor(() => liveAnswers.length === 2, 10000, 'the second answer');
    t.deepEqual([...answered], [live], `the writer still serves ${answered.size - 1} channel(s) of ended event threads ` +
      `(${names.size} channels opened in all)`);
  } finally {
    hello.close();
    for (const c of opened) c.close();
    await s.stop();
  }
});
