/**
 * Event threads that exit on their own (process.exit in a handler, sync or after an await) while
 * other sessions' requests are served: every request is answered, a reply or an _error frame.
 * The replies of the events a thread finished in its last claim, committed to its outbound ring
 * but never flushed, are delivered when its thread is gone; the exiting handlers' own requests
 * are answered GSF_ERR_MESSAGE_DROPPED and counted (engine/events_lost, engine/events_abandoned).
 */
import test from 'ava';
import { waitFor } from './_server.ts';
import { openRawJson, startSessionServer } from './_session.ts';

const open = openRawJson;

test.serial('every request is answered while event threads keep exiting', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_timeout_in_ms: 60000, event_threads_size: 2 } }, ['thread-exits']);
  try {
    const clients = await Promise.all(Array.from({ length: 6 }, () => open(s.url)));
    const sent = clients.map(() => [] as number[]);
    let id = 1;
    for (let round = 0; round < 25; round++) {
      for (const [i, c] of clients.entries()) {
        const type = i === 0 ? 'exit' : i === 1 ? 'await-exit' : 'echo';
        for (const ty of [type, 'echo']) {
          c.ws.send(JSON.stringify({ type: ty, body: id, id }));
          sent[i]!.push(id++);
        }
      }
    }
    // Once every exit is accounted for, a last request on each session is answered after all of
    // its earlier ones that are still queued: what is unanswered then never is.
    await waitFor(() => s.server.dispatcher.totals.lost + s.server.dispatcher.totals.abandoned === 50, 30000, 'the exits');
    for (const c of clients) c.ws.send(JSON.stringify({ type: 'echo', body: 'last', id: 1e6 }));
    await waitFor(() => clients.every((c) => c.got.some((g) => g.id === 1e6)), 30000, 'the last answers');
    const unanswered = clients.map((c, i) => sent[i]!.filter((n) => !c.got.some((g) => g.id === n)));
    t.deepEqual(unanswered, clients.map(() => []));
    t.is(s.server.dispatcher.totals.lost, 25);
    t.is(s.server.dispatcher.totals.abandoned, 25);
    for (const c of clients) c.ws.close();
  } finally {
    await s.stop();
  }
});
