/**
 * Session churn leaves nothing behind. Hundreds of sessions connect, log in, join groups,
 * send requests and go away (cleanly, abruptly, mid-request); afterwards the session table,
 * groups, logins (the manager's and the addon's copy), counters and the queue must be back to
 * their baseline.
 */
import test from 'ava';
import WebSocket from 'ws';
import { native } from '../../src/native.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

interface Raw {
  ws: WebSocket;
  replies: Array<Record<string, unknown>>;
  closed: Promise<number>;
}

async function open(s: SessionServer): Promise<Raw> {
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
  const replies: Array<Record<string, unknown>> = [];
  ws.on('message', (m) => replies.push(JSON.parse(String(m)) as Record<string, unknown>));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  ws.on('error', () => undefined);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  return { ws, replies, closed };
}

function send(r: Raw, type: string, body: unknown, id: number): void {
  r.ws.send(JSON.stringify({ type, body, id }));
}

function baseline(): Record<string, unknown> {
  const l = activeSessions!.listener;
  return {
    sessions: l.size,
    groups: l.groupNames().length,
    accounts: activeSessions!.accounts.count,
    bindings: activeSessions!.accounts.bindings().length,
    nativeAccounts: native.sessionAccountCount(),
    counterSessions: native.counterReadInt('engine', 'sessions'),
    counterUsers: native.counterReadInt('engine', 'concurrent_user'),
    outstanding: native.queueStats().outstanding,
    waiting: native.queueStats().waiting,
  };
}

const EMPTY = { sessions: 0, groups: 0, accounts: 0, bindings: 0, nativeAccounts: 0, counterSessions: 0, counterUsers: 0, outstanding: 0, waiting: 0 };

async function churn(s: SessionServer, round: number, count: number): Promise<void> {
  const batch = 40;
  for (let b = 0; b < count; b += batch) {
    const clients = await Promise.all(Array.from({ length: batch }, () => open(s)));
    clients.forEach((c, j) => {
      const i = round * 100000 + b + j;
      send(c, 'login', { account: `acct-${i}` }, 1);
      send(c, 'group', { group: `room-${i}`, join: true }, 2);
      send(c, 'group', { group: 'lobby', join: true }, 3);
      // Every fifth logs in as an account already taken (replace policy: closes the older one).
      if (j % 5 === 4) send(c, 'login', { account: `acct-${i - 1}` }, 4);
      send(c, 'aseq', { n: j, group: 'lobby' }, 5);
    });
    await Promise.all(clients.map(async (c, j) => {
      const mode = j % 3;
      if (mode === 0) {
        // Mid-request: gone at once, with its requests still queued or running.
        c.ws.terminate();
        return;
      }
      await waitFor(() => c.replies.some((r) => r.id === 5) || c.ws.readyState !== WebSocket.OPEN, 10000, 'aseq reply');
      if (mode === 1) c.ws.close(1000, 'bye');
      else c.ws.terminate();
    }));
    await Promise.all(clients.map((c) => c.closed));
  }
}

async function check(t: import('ava').ExecutionContext, ioThreads: number): Promise<void> {
  const s = await startSessionServer({ SessionService: { io_threads_size: ioThreads } });
  try {
    t.deepEqual(baseline(), EMPTY);
    await churn(s, 0, 200);
    const settle = async (): Promise<void> => {
      await waitFor(() => {
        const b = baseline();
        return b.sessions === 0 && b.outstanding === 0 && b.waiting === 0 && b.accounts === 0 && b.nativeAccounts === 0;
      }, 10000, 'sessions gone').catch(() => undefined);
    };
    await settle();
    t.deepEqual(baseline(), EMPTY, 'after 200 sessions');
    await churn(s, 1, 200);
    await settle();
    t.deepEqual(baseline(), EMPTY, 'after 400 sessions');
    const st = activeSessions!.listener.stats;
    t.is(st.opened, 400);
    t.is(st.closed, 400);
  } finally {
    await s.stop();
  }
}

test.serial('sessions churning with logins, groups and mid-request drops leave nothing behind (1 listener thread)', async (t) => {
  await check(t, 1);
});

test.serial('sessions churning with logins, groups and mid-request drops leave nothing behind (2 I/O threads)', async (t) => {
  await check(t, 2);
});
