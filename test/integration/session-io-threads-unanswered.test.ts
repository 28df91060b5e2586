/**
 * With two I/O threads, which push a session's messages into the queue themselves: messages a
 * session streams while an earlier one of its messages times out (its handler spins or awaits)
 * are answered after that one's GSF_ERR_MESSAGE_TIMEOUT and the GSF_ERR_MESSAGE_DROPPED of those
 * cancelled behind it, every one once, in the order sent (the answers are queued where the
 * messages stood, first on the tag, in the same step as the timeout).
 */
import test from 'ava';
import { waitFor } from './_server.ts';
import { openRawJson, startSessionServer } from './_session.ts';

const open = openRawJson;

for (const first of ['slow', 'hang'] as const) {
  test.serial(`io_threads_size 2, ${first}: messages streamed across the timeout are answered in the order sent`, async (t) => {
    const s = await startSessionServer({
      EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 2 },
      SessionService: { io_threads_size: 2 },
    });
    try {
      const clients = await Promise.all(Array.from({ length: 8 }, () => open(s.url)));
      for (const c of clients) c.ws.send(JSON.stringify({ type: first, body: { ms: 900 }, id: 0 }));
      // Stream until every client has its first answer (the timeout's), then a while longer.
      let id = 1;
      let stopAt = Infinity;
      while (id < stopAt) {
        for (const c of clients) c.ws.send(JSON.stringify({ type: 'echo', body: id, id }));
        if (stopAt === Infinity && clients.every((c) => c.got.length > 0)) stopAt = id + 200;
        id++;
        if (id % 4 === 0) await new Promise((r) => setImmediate(r));
      }
      await waitFor(() => clients.every((c) => c.got.some((g) => g.id === id - 1)), 20000, 'the last answers');
      const firstAnswers = clients.map((c) => c.got[0]!.id);
      const outOfOrder = clients.map((c) => c.got.filter((g, i) => i > 0 && g.id! < c.got[i - 1]!.id!).length);
      t.deepEqual(firstAnswers, clients.map(() => 0), 'every session\'s first answer is its timed-out message\'s');
      t.deepEqual(outOfOrder, clients.map(() => 0));
      t.deepEqual(clients.map((c) => c.got.length), clients.map(() => id));
      for (const c of clients) c.ws.close();
    } finally {
      await s.stop();
    }
  });
}
