/**
 * Two `PUT /v1/configurations/event_threads_size/{n}` at once. Each is answered
 * once its change took effect (rest.md, "Runtime configuration"); the one received last and
 * answered `200 set to <n>` must be what the flag and `/v1/status` show once both are answered.
 */
import test from 'ava';
import { startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';

test('a resize back to the current size while another resize runs is not lost', async (t) => {
  const s = await startTestServer(); // one event thread
  try {
    const api = client(s.server.api.port);
    const status = async (): Promise<number> => ((await api.get('/v1/status')).body as { event_threads_size: number }).event_threads_size;
    const grow = api.put('/v1/configurations/event_threads_size/2');
    // The server has the first PUT once /v1/status shows the size asked for (set at once).
    await waitFor(async () => (await status()) === 2, 20000, 'the first resize to begin');
    const back = await api.put('/v1/configurations/event_threads_size/1');
    const grown = await grow;
    t.deepEqual([grown.status, grown.body], [200, { event_threads_size: { result: 'event_threads_size set to 2\n' } }]);
    t.deepEqual([back.status, back.body], [200, { event_threads_size: { result: 'event_threads_size set to 1\n' } }]);
    // Both are answered: the later change is the one in effect.
    t.deepEqual((await api.get('/v1/configurations/event_threads_size')).body,
      { event_threads_size: { type: 'uint64', desc: 'Number of main event threads', value: '1' } });
    t.is(await status(), 1);
  } finally {
    await s.stop();
  }
});
