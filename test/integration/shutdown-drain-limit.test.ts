/**
 * A stop with work in flight (docs/decisions.md, "Stopping"): plugin routes whose events still
 * run at the drain limit change nothing, an onStop hook's events run in the drain, the API
 * service answers 503 to what kept-alive connections ask during the drain, and a native
 * on_stop past its deadline is cut off (its calls expire, its lines still reach the log).
 */
import test from 'ava';
import net from 'node:net';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { startSessionServer } from './_session.ts';

const PST = path.join(fixtures, 'plugins', 'probe-stoptraffic-objects');
const count = (name: string): number => native.counterValue('pst', name) ?? 0;

test.serial('plugin-route requests answered 503 at the drain limit leave no committed change behind', async (t) => {
  // Three orders, each on its own event thread, each still running (600 ms) at the 200 ms limit.
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 3, shutdown_drain_timeout_in_ms: 200 }, ObjectStore: {} }, [PST]);
  const names = ['late0', 'late1', 'late2'];
  const requests = names.map((n) => fetch(`http://127.0.0.1:${s.server.api.port}/pst/order?name=${n}&ms=600`, { method: 'POST' }));
  try {
    await waitFor(() => s.server.outstandingEvents().count >= 3, 5000, 'the three handlers to run');
  } finally {
    await s.stop();
  }
  const answers = await Promise.all(requests.map(async (p) => { const r = await p; return `${r.status} ${await r.text()}`; }));
  const again = await startTestServer({ ObjectStore: {} }, [PST], s.dir);
  const found: string[] = [];
  try {
    for (const n of names) {
      const r = await fetch(`http://127.0.0.1:${again.server.api.port}/pst/order?name=${n}`);
      if (((await r.json()) as { found: boolean }).found) found.push(n);
    }
  } finally {
    await again.stop();
  }
  // The stop counted them dropped and told each client the server stopped before its handler answered...
  t.true(s.logs().some((l) => l.includes('stopping with 0 queued and 3 running event(s) after 200 ms: they are dropped')));
  t.deepEqual(answers, names.map(() => '503 {"error":"GSF_ERR_UNAVAILABLE","message":"the server stopped before the handler answered"}'));
  // ...so none of those orders is in the database: their threads ended with the stop.
  t.deepEqual(found, []);
});

test.serial('an onStop hook that invokes an event has it run in the drain', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 2000 } }, [PST]);
  s.server.thread.flags.set('pst_stop_hook', 'invoke');
  const before = count('saved');
  await s.stop();
  t.is(globalThis.pstStopHookError, undefined);
  t.is(count('saved'), before + 1);
});

test.serial('a session-closed handler that awaits an account call at stop is refused at once, and the drain ends', async (t) => {
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 60_000 } }, [PST]);
  const before = count('close_login_GSF_ERR_SHUTTING_DOWN');
  await s.connect('json');
  await s.connect('json');
  await s.stop();
  // The sessions were closed by the stop, and the account manager with them: both handlers
  // are told so rather than wait for an answer until the drain limit.
  t.is(count('close_login_GSF_ERR_SHUTTING_DOWN'), before + 2);
  t.false(s.logs().some((l) => l.includes('they are dropped') || l.includes('Event timeout')), s.logs().join('\n'));
});

const refused = (port: number): Promise<boolean> => new Promise((resolve) => {
  const c = net.connect(port, '127.0.0.1');
  c.on('connect', () => { c.destroy(); resolve(false); });
  c.on('error', () => resolve(true));
});

for (const ask of ['GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n']) {
  test.serial(`a new request on a kept-alive API connection during the drain gets 503 GSF_ERR_UNAVAILABLE (${ask.split(' ').slice(0, 2).join(' ')})`, async (t) => {
    const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 3000 }, ObjectStore: {} }, [PST]);
    const port = s.server.api.port;
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => { text += d.toString('latin1'); });
    socket.on('error', () => undefined);
    socket.write('GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => /HTTP\/1\.1 200[^]*\}$/.test(text), 5000, 'the first answer');
    // A route whose handler holds the drain for 1.5 s.
    const slow = fetch(`http://127.0.0.1:${port}/pst/order?name=slow&ms=1500`, { method: 'POST' });
    await waitFor(() => s.server.outstandingEvents().count >= 1, 5000, 'the route');
    const stopping = s.stop();
    try {
      // The listener is closed: the stop is in its drain.
      await waitFor(() => refused(port), 3000, 'the listener to close');
      text = '';
      socket.write(ask);
      await waitFor(() => /HTTP\/1\.1 \d+[^]*\r\n\r\n[^]*\}$/.test(text), 3000, 'the answer').catch(() => null);
    } finally {
      await stopping;
      socket.destroy();
    }
    t.is((await slow).status, 200);
    t.regex(text, /^HTTP\/1\.1 503 /, text);
    t.regex(text, /\{"error":"GSF_ERR_UNAVAILABLE","message":"[^"]+"\}$/);
  });
}

const SLOWSTOP = path.join(fixtures, 'native-plugins', 'probe-stoptraffic-slowstop');

test.serial('a native on_stop past its deadline: the stop goes on, and what it does late is refused with a line, not a crash', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 300 } }, [SLOWSTOP]);
  const nc = (n: string): number => native.counterValue('pst_native', n) ?? 0;
  const before = nc('late_done');
  const started = Date.now();
  await s.stop();
  const took = Date.now() - started;
  // on_stop wakes 800 ms past its deadline and uses its call.
  await waitFor(() => nc('late_done') === before + 1, 5000, 'on_stop to return');
  t.true(took < 300 + 300 + 2000, `the stop took ${took} ms`);
  t.true(s.logs().some((l) => l.includes("plugin 'probe-stoptraffic-slowstop' on_stop had not returned by its deadline (300 ms, ")));
  t.is(nc('late_done') - before, 1);
  // It invoked an event 800 ms after stop() resolved: a stopped server must refuse it (as a
  // managed invoke after stop is refused with GSF_ERR_SHUTTING_DOWN), not accept an event that never runs.
  t.is(nc('late_invoke_ok'), 0);
  t.is(nc('late_invoke_refused'), 1);
  // Its line, logged after gsf stopped waiting, still reaches the server's log.
  await waitFor(() => s.logs().some((l) => l.endsWith('native] probe-stoptraffic-slowstop: slowstop: on_stop late line')), 5000, 'the late line');
});
