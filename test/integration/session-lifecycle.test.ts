import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import type { GsfClient } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer;
let file: string;

test.before(async () => {
  s = await startSessionServer({ EventDispatcher: { event_threads_size: 4 } });
  file = path.join(s.dir, 'sessions.jsonl');
  s.server.thread.flags.set('session_probe_file', file);
});
test.after.always(async () => {
  await s?.stop();
});

const lines = (): Array<Record<string, unknown>> => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);

test.serial('replies keep each session\'s order under load from many sessions on 4 workers', async (t) => {
  const sessions = 40;
  const perSession = 300;
  const clients = await Promise.all(Array.from({ length: sessions }, (_, i) => s.connect(i % 2 === 0 ? 'json' : 'msgpack')));
  try {
    const done = clients.map((c: GsfClient, i) => new Promise<number[]>((resolve) => {
      const got: number[] = [];
      c.on<{ n: number }>('seq', (body) => {
        got.push(body.n);
        if (got.length === perSession) resolve(got);
      });
      for (let n = 1; n <= perSession; n++) c.send('seq', { n, spin: (n + i) % 50 === 0 ? 2 : 0 });
    }));
    const results = await Promise.all(done);
    const expected = Array.from({ length: perSession }, (_, k) => k + 1);
    for (const got of results) t.deepEqual(got, expected);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
});

test.serial('opened and closed handlers run on the session tag; engine/sessions follows', async (t) => {
  await waitFor(() => native.counterReadInt('engine', 'sessions') === 0, 10000, 'no sessions');
  const a = await s.connect('json', '1.0.0');
  const b = await s.connect('msgpack', '1.0.0');
  t.is(native.counterReadInt('engine', 'sessions'), 2);
  const aId = (await a.request<{ sessionId: number }>('whoami')).sessionId;
  const bId = (await b.request<{ sessionId: number }>('whoami')).sessionId;
  await a.close(1000, 'done');
  await waitFor(() => native.counterReadInt('engine', 'sessions') === 1, 10000, 'one session');
  await b.close();
  await waitFor(() => native.counterReadInt('engine', 'sessions') === 0, 10000, 'no sessions');
  const recs = await waitFor(() => {
    const l = lines().filter((r) => r.sessionId === aId || r.sessionId === bId);
    return l.length === 4 ? l : null;
  }, 10000, 'four lifecycle lines');
  const opened = recs.find((r) => r.what === 'opened' && r.sessionId === aId)!;
  t.like(opened, { codec: 'json', version: '1.0.0', address: '127.0.0.1', tag: aId, kind: 'engine' });
  t.like(recs.find((r) => r.what === 'opened' && r.sessionId === bId), { codec: 'msgpack', tag: bId });
  t.like(recs.find((r) => r.what === 'closed' && r.sessionId === aId), { code: 1000, reason: 'done', account: null, tag: aId });
  t.like(recs.find((r) => r.what === 'closed' && r.sessionId === bId), { code: 1000, reason: '', tag: bId });
});

test.serial('session_message_logging_level 0/1/2 is read live', async (t) => {
  const c = await s.connect('json');
  const flags = s.server.thread.flags;
  try {
    await c.request('echo', 'quiet');
    flags.set('session_message_logging_level', 1);
    await c.request('echo', 'typed');
    flags.set('session_message_logging_level', 2);
    await c.request('echo', 'whole');
    flags.set('session_message_logging_level', 0);
    await c.request('echo', 'quiet again');
  } finally {
    flags.set('session_message_logging_level', 0);
    await c.close();
  }
  const logged = s.logs().filter((l) => l.includes('session message'));
  t.false(logged.some((l) => l.includes('quiet')));
  t.true(logged.some((l) => /session message in: session=\d+, type=echo, length=37$/.test(l)));
  t.true(logged.some((l) => /session message out: session=\d+, type=echo, length=37$/.test(l)));
  t.true(logged.some((l) => /session message in: session=\d+, type=echo, length=37, message=\{"type":"echo","body":"whole","id":3\}$/.test(l)));
  t.is(logged.length, 4);
});
