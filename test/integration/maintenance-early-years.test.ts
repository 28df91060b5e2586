/**
 * Maintenance dates of the years 0000 to 0099. `YYYY/MM/DD HH:MM` dates are
 * compared as the instants they name; `date_end` before `date_start` is a 400 (docs/decisions.md,
 * "Maintenance dates are UTC; date_end before date_start is a 400").
 */
import test from 'ava';
import { startTestServer } from './_server.ts';
import { client } from './_http.ts';

test('a date_end in year 0099 is before a date_start in 1998: 400, and nothing changes', async (t) => {
  const s = await startTestServer();
  try {
    const api = client(s.server.api.port);
    const before = (await api.get('/v1/maintenance')).body;
    const r = await fetch(`http://127.0.0.1:${s.server.api.port}/v1/maintenance/update`, {
      method: 'PUT', body: JSON.stringify({ date_start: '1998/06/01 00:00', date_end: '0099/01/01 00:00', messages: 'm' }),
    });
    t.deepEqual([r.status, await r.json()],
      [400, { error: 'GSF_ERR_BAD_REQUEST', message: "'date_end' must not be before 'date_start'", field: 'date_end' }]);
    t.deepEqual((await api.get('/v1/maintenance')).body, before);
  } finally {
    await s.stop();
  }
});
