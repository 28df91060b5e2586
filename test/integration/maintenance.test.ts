import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { startServer } from '../../src/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { GsfRequestError } from '../../src/sdk/index.ts';
import { TEST_IO_THREADS, waitFor } from './_server.ts';
import { apiUrl, startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer | null = null;
test.afterEach.always(async () => {
  await s?.stop();
  s = null;
});

const RECORD = { date_start: '2026/11/22 03:00', date_end: '2026/11/22 05:00', messages: 'Back at five.' };

function writeFile(content: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-maint-'));
  const file = path.join(dir, 'maintenance.json');
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

async function put(body: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${apiUrl(s!)}/v1/maintenance/update`, { method: 'PUT', body });
  return { status: res.status, body: await res.json() };
}

test.serial('from file and manifest: on at start, new sessions are told on connect, their packets are dropped', async (t) => {
  s = await startSessionServer({
    Maintenance: { maintenance_file: writeFile(RECORD), under_maintenance: true },
    Logging: { v: 1 },
  });
  const c = await s.connect('msgpack');
  const first = await c.next('_maintenance');
  t.deepEqual(first.body, { under_maintenance: true, ...RECORD });
  const before = native.counterReadInt('engine', 'maintenance_dropped_messages') ?? 0;
  c.send('echo', 1);
  c.send('echo', 2);
  await waitFor(() => activeSessions!.listener.stats.droppedInMaintenance === 2, 5000, 'two dropped');
  t.is(native.counterReadInt('engine', 'maintenance_dropped_messages'), before + 2);
  t.is(s.logs().filter((l) => /maintenance: dropped a message from session \d+ \(\d+ bytes\)/.test(l)).length, 2);
  // A request is not sent at all: it would wait out its time limit for a reply that never comes.
  const refused = await t.throwsAsync(c.request('echo', 'x'.repeat(5000)), { instanceOf: GsfRequestError });
  t.is(refused.code, 'maintenance');
  t.is(refused.message, "'echo' not sent: the server is under maintenance until 2026/11/22 05:00 and ignores messages meanwhile");
  c.send('echo', 4);
  const dropped = (): number[] => s!.logs().flatMap((l) => /maintenance: dropped a message from session \d+ \((\d+) bytes\)/.exec(l)?.[1] ?? []).map(Number);
  await waitFor(() => dropped().length >= 3, 5000, 'the send after the request dropped');
  t.true(dropped().every((bytes) => bytes < 100), `only the small sends reached the server: ${dropped().join(', ')}`);
  // Turning it off tells every session, and packets flow again.
  const end = c.next('_maintenance_end');
  t.deepEqual(await put(JSON.stringify({ ...RECORD, under_maintenance: false })), { status: 200, body: { under_maintenance: false, ...RECORD, follow_schedule: false } });
  t.deepEqual((await end).body, { under_maintenance: false, ...RECORD });
  t.is(await c.request('echo', 3), 3);
  await c.close();
});

test.serial('from PUT: connected sessions of both codecs are notified; dates and message are replaced', async (t) => {
  s = await startSessionServer();
  const a = await s.connect('json');
  const b = await s.connect('msgpack');
  t.is(await a.request('echo', 'before'), 'before');
  const na = a.next('_maintenance');
  const nb = b.next('_maintenance');
  const record = { date_start: '2026/12/01 10:00', date_end: '2026/12/01 12:30', messages: 'Patch 1.2' };
  t.deepEqual(await put(JSON.stringify({ ...record, under_maintenance: true })), { status: 200, body: { under_maintenance: true, ...record, follow_schedule: false } });
  t.deepEqual((await na).body, { under_maintenance: true, ...record });
  t.deepEqual((await nb).body, { under_maintenance: true, ...record });
  t.deepEqual(b.maintenance, { under_maintenance: true, ...record });
  // A new message while on is sent again; without under_maintenance the state stays.
  const again = a.next('_maintenance');
  const updated = { ...record, messages: 'Patch 1.2, a bit longer' };
  t.is((await put(JSON.stringify(updated))).status, 200);
  t.deepEqual((await again).body, { under_maintenance: true, ...updated });
  const c = await s.connect('json');
  t.deepEqual((await c.next('_maintenance')).body, { under_maintenance: true, ...updated });
  const res = await fetch(`${apiUrl(s)}/v1/maintenance`);
  t.deepEqual(await res.json(), { under_maintenance: true, ...updated, follow_schedule: false });
  await Promise.all([a.close(), b.close(), c.close()]);
});

test.serial('PUT /v1/maintenance/update: every 400 case has its exact body', async (t) => {
  s = await startSessionServer();
  const bad = (message: string, field?: string) => ({ status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message, ...(field ? { field } : {}) } });
  const cases: Array<[string, ReturnType<typeof bad>]> = [
    ['not json', bad('request body is not valid JSON')],
    ['', bad('request body is not valid JSON')],
    ['[1]', bad('request body must be a JSON object')],
    ['"text"', bad('request body must be a JSON object')],
    [JSON.stringify({ date_end: RECORD.date_end, messages: 'm' }), bad("'date_start' is required", 'date_start')],
    [JSON.stringify({ date_start: RECORD.date_start, messages: 'm' }), bad("'date_end' is required", 'date_end')],
    [JSON.stringify({ date_start: RECORD.date_start, date_end: RECORD.date_end }), bad("'messages' is required", 'messages')],
    [JSON.stringify({ ...RECORD, date_start: 202611220300 }), bad("'date_start' must be a string", 'date_start')],
    [JSON.stringify({ ...RECORD, date_end: null }), bad("'date_end' must be a string", 'date_end')],
    [JSON.stringify({ ...RECORD, messages: ['a'] }), bad("'messages' must be a string", 'messages')],
    // Sessions of both codecs get the same text: one with no UTF-8 form is refused.
    [JSON.stringify({ ...RECORD, messages: 'Back \ud800 soon' }), bad("'messages' holds an unpaired UTF-16 surrogate (text with no UTF-8 form)", 'messages')],
    [JSON.stringify({ ...RECORD, under_maintenance: 'true' }), bad("'under_maintenance' must be a boolean", 'under_maintenance')],
    [JSON.stringify({ ...RECORD, under_maintenance: 1 }), bad("'under_maintenance' must be a boolean", 'under_maintenance')],
    [JSON.stringify({ ...RECORD, date_start: '2026-11-22 03:00' }), bad("'date_start' must be a date in the format YYYY/MM/DD HH:MM (got '2026-11-22 03:00')", 'date_start')],
    [JSON.stringify({ ...RECORD, date_end: '2026/02/30 10:00' }), bad("'date_end' must be a date in the format YYYY/MM/DD HH:MM (got '2026/02/30 10:00')", 'date_end')],
    [JSON.stringify({ ...RECORD, date_end: '2026/11/22 24:00' }), bad("'date_end' must be a date in the format YYYY/MM/DD HH:MM (got '2026/11/22 24:00')", 'date_end')],
    [JSON.stringify({ ...RECORD, date_end: '2026/11/21 05:00' }), bad("'date_end' must not be before 'date_start'", 'date_end')],
    // A long bad value is quoted cut, with its length: a megabyte in is not a megabyte out.
    [JSON.stringify({ ...RECORD, date_start: `2026/${'9'.repeat(200_000)}` }),
      bad(`'date_start' must be a date in the format YYYY/MM/DD HH:MM (got '2026/${'9'.repeat(75)}… (200005 characters)')`, 'date_start')],
    [JSON.stringify({ ...RECORD, reason: 'x' }), bad("unknown key 'reason' (allowed: date_start, date_end, messages, under_maintenance)", 'reason')],
  ];
  for (const [body, expected] of cases) t.deepEqual(await put(body), expected, body);
  t.false(activeSessions!.maintenance.on, 'no bad request changed the state');
});

// No session service starts here: the second pass of `npm test` (two I/O threads) has nothing to add.
(TEST_IO_THREADS > 1 ? test.skip : test.serial)('a bad maintenance file stops the start with a message naming the problem', async (t) => {
  const start = (file: string, extra: Record<string, unknown> = {}) => startServer({
    manifest: { components: [{ name: 'ApiService', arguments: { api_service_port: 0 } }, { name: 'Maintenance', arguments: { maintenance_file: file, ...extra } }], plugins: [] },
    dir: os.tmpdir(),
  });
  const cases: Array<[unknown, string]> = [
    [{ ...RECORD, under_maintenance: true }, "unknown key 'under_maintenance' (allowed: date_start, date_end, messages)"],
    [{ date_start: RECORD.date_start, messages: 'x' }, "'date_end' is required"],
    [{ ...RECORD, date_start: '22/11/2026 03:00' }, "'date_start' must be a date in the format YYYY/MM/DD HH:MM (got '22/11/2026 03:00')"],
    [{ ...RECORD, messages: 5 }, "'messages' must be a string"],
  ];
  for (const [content, problem] of cases) {
    const file = writeFile(content);
    const err = await t.throwsAsync(start(file));
    t.is(err.message, `(inline manifest): Maintenance.maintenance_file '${file}': ${problem}`);
  }
  const notJson = writeFile('{oops');
  const e1 = await t.throwsAsync(start(notJson));
  t.true(e1.message.startsWith(`(inline manifest): Maintenance.maintenance_file '${notJson}' is not valid JSON (`));
  const missing = path.join(os.tmpdir(), 'gsf-no-such-maintenance.json');
  const e2 = await t.throwsAsync(start(missing));
  t.is(e2.message, `(inline manifest): Maintenance.maintenance_file '${missing}' cannot be read (ENOENT)`);
  const e3 = await t.throwsAsync(start('', { under_maintenance: true }));
  t.is(e3.message, '(inline manifest): Maintenance.under_maintenance is true but Maintenance.maintenance_file is not set');
});

function utc(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

test.serial('follow_schedule: on inside the window at start, and recomputed from new dates', async (t) => {
  const now = Date.now();
  const open = { date_start: utc(now - 3_600_000), date_end: utc(now + 3_600_000), messages: 'scheduled' };
  s = await startSessionServer({ Maintenance: { maintenance_file: writeFile(open), follow_schedule: true } });
  t.true(activeSessions!.maintenance.on);
  const c = await s.connect('json');
  t.deepEqual((await c.next('_maintenance')).body, { under_maintenance: true, ...open });
  const past = { date_start: utc(now - 7_200_000), date_end: utc(now - 3_600_000), messages: 'was scheduled' };
  const end = c.next('_maintenance_end');
  t.deepEqual(await put(JSON.stringify(past)), { status: 200, body: { under_maintenance: false, ...past, follow_schedule: true } });
  t.deepEqual((await end).body, { under_maintenance: false, ...past });
  await c.close();
});
