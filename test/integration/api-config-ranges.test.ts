import test from 'ava';
import { startTestServer } from './_server.ts';
import { client } from './_http.ts';
import { CORES, MAX_EVENT_THREADS } from '../../src/config/schema.ts';

test('PUT over a flag range answers 400 with the limit, and nothing changes', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 }, RuntimeConfiguration: {} });
  try {
    const api = client(s.server.api.port);
    const over = MAX_EVENT_THREADS + 1;
    const r = await api.put(`/v1/configurations/event_threads_size/${over}`);
    t.is(r.status, 400);
    t.deepEqual(r.body, { event_threads_size: {
      result: `${over} is not a valid value for event_threads_size: event_threads_size must be at most ${MAX_EVENT_THREADS} ` +
        `(4 event threads per core, ${CORES} core${CORES === 1 ? '' : 's'})\n`,
    } });
    t.is(s.server.dispatcher.size, 1);
    t.is(((await api.get('/v1/status')).body as { event_threads_size: number }).event_threads_size, 1);
    for (const [flag, value, why] of [['minloglevel', '4', 'must be at most 3'], ['minloglevel', '-1', 'must be an integer from 0 to 3'],
      ['v', '-1', 'must be an integer >= 0']] as const) {
      const bad = await api.put(`/v1/configurations/${flag}/${value}`);
      t.is(bad.status, 400);
      t.deepEqual(bad.body, { [flag]: { result: `${value} is not a valid value for ${flag}: ${flag} ${why}\n` } });
      t.is(s.server.thread.flags.get(flag), 0);
    }
    // Past 2^53 - 1 the ceiling is the reason (those are integers, and not negative).
    const huge = await api.put('/v1/configurations/event_threads_size/18446744073709551615');
    t.deepEqual(huge.body, { event_threads_size: {
      result: `18446744073709551615 is not a valid value for event_threads_size: event_threads_size must be at most ${MAX_EVENT_THREADS} ` +
        `(4 event threads per core, ${CORES} core${CORES === 1 ? '' : 's'})\n`,
    } });
    t.deepEqual((await api.put('/v1/configurations/minloglevel/3')).body, { minloglevel: { result: 'minloglevel set to 3\n' } });
    t.deepEqual((await api.put('/v1/configurations/minloglevel/0')).body, { minloglevel: { result: 'minloglevel set to 0\n' } });
  } finally {
    await s.stop();
  }
});
