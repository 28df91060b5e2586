import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { CloseCode } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { startSessionServer } from './_session.ts';

test.serial('close_session_when_event_timeout: the timeout handler runs, then the session closes (4011) and its closed handler runs', async (t) => {
  const s = await startSessionServer({
    EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 2 },
    SessionService: { close_session_when_event_timeout: true },
  });
  const file = path.join(s.dir, 'sessions.jsonl');
  s.server.thread.flags.set('session_probe_file', file);
  try {
    const c = await s.connect('json');
    const other = await s.connect('json');
    const id = (await c.request<{ sessionId: number }>('whoami')).sessionId;
    c.send('slow', { ms: 3000 });
    t.deepEqual(await c.closed, { code: CloseCode.eventTimeout, reason: 'an event of this session timed out' });
    const lines = await waitFor(() => {
      const l = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((x) => JSON.parse(x) as Record<string, unknown>) : [];
      const mine = l.filter((r) => r.session === id || r.sessionId === id);
      return mine.some((r) => r.what === 'closed') ? mine : null;
    }, 10000, 'closed line');
    t.deepEqual(lines.filter((r) => r.what !== 'opened').map((r) => r.what), ['timeout', 'closed']);
    t.like(lines.find((r) => r.what === 'timeout'), { name: 'slow', session: id });
    t.like(lines.find((r) => r.what === 'closed'), { code: CloseCode.eventTimeout, reason: 'an event of this session timed out' });
    t.is(await other.request('echo', 'unaffected'), 'unaffected');
    await other.close();
  } finally {
    await s.stop();
  }
});

test.serial('without the switch a timed-out session stays open and its later messages run', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_timeout_in_ms: 300, event_threads_size: 2 } });
  try {
    const c = await s.connect('msgpack');
    c.send('slow', { ms: 3000 });
    await waitFor(() => s.logs().some((l) => l.includes('Event timeout: event_name=slow')), 10000, 'timeout line');
    t.is(await c.request('echo', 'after'), 'after');
    t.true(c.open);
    await c.close();
  } finally {
    await s.stop();
  }
});
