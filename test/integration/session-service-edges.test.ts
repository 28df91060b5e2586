/**
 * The session service between two steps, with one and with two I/O threads:
 * - The process-wide flush sequence (a shared Int32 cell) orders every worker's outbound
 *   flushes; a long-running server passes 2^31 of them, and requests are still answered, in
 *   order, after that.
 * - A frame routed to a session while the session service stops is either written before the
 *   session's 1001 or counted as dropped (`engine/dropped_sends_no_session`).
 * - Maintenance turned on while a client connects: the client gets `_maintenance` once (on
 *   connect, or with every session), never twice; the client runs on a worker thread so that it
 *   can connect between the gate and the frame to every session.
 */
import { Worker } from 'node:worker_threads';
import test from 'ava';
import { featureCell } from '../../src/events/wake.ts';
import { native } from '../../src/native.ts';
import { encodeFrame } from '../../src/session/codec.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { currentFlushSeq } from '../../src/session/worker/outbound-writer.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer | undefined;
test.afterEach.always(async () => {
  await s?.stop();
  s = undefined;
});

test.serial('requests are answered across the flush sequence passing 2^31', async (t) => {
  const seq = featureCell(0);
  // As if the server had run a long while: a few flushes short of 2^31.
  Atomics.store(seq.cells, seq.index, 2 ** 31 - 4);
  s = await startSessionServer();
  const c = await s.connect('json');
  const answers: unknown[] = [];
  for (let n = 0; n < 12; n++) {
    const answer = await Promise.race([
      c.request('echo', n),
      new Promise((resolve) => setTimeout(() => resolve(`no answer to request ${n} in 5 s`), 5000).unref()),
    ]);
    answers.push(answer);
    if (typeof answer === 'string') break;
  }
  t.deepEqual(answers, Array.from({ length: 12 }, (_, n) => n));
  // The shared cell went past 2^31 (negative as an Int32); flush numbers started again from 0.
  t.true(Atomics.load(seq.cells, seq.index) < 0);
  t.true(currentFlushSeq() < 64);
  const errors = s.logs().filter((l) => /error|flush/i.test(l));
  t.deepEqual(errors, []);
});

test.serial('a frame routed while the session service stops is written or counted as dropped', async (t) => {
  s = await startSessionServer();
  const c = await s.connect('json');
  const id = (await c.request<{ sessionId: number }>('whoami')).sessionId;
  const got: unknown[] = [];
  void c.next('late').then((m) => got.push(m.body), () => undefined);
  const dropped = (): number => native.counterReadInt('engine', 'dropped_sends_no_session') ?? 0;
  const before = dropped();
  const listener = activeSessions!.listener;
  const stopping = listener.shutdown();
  // The session's thread has closed it (it counts the close before it says it stopped); this
  // thread has not yet heard. Polled without yielding, so no note is read meanwhile.
  const deadline = Date.now() + 10_000;
  while (native.counterReadInt('engine', 'sessions') !== 0 && Date.now() < deadline) { /* poll */ }
  t.is(native.counterReadInt('engine', 'sessions'), 0);
  // A flush the reader applies during the stop: after the stop began, before it ended.
  const routed = listener.send(id, encodeFrame('json', 'late', { n: 1 }));
  await stopping;
  const info = await c.closed;
  // Frames come before the close frame: whatever was written has been read (and pushed) by now.
  t.is(info.code, 1001);
  // Every frame accepted is delivered or counted.
  t.is(got.length + (dropped() - before), 1);
  t.is(routed, got.length === 1); // true only for a frame that was written
});

const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { WebSocket } = require('ws');
const cell = new Int32Array(workerData.cell);
const types = [];
parentPort.once('message', () => {
  const ws = new WebSocket(workerData.url + '/?codec=json&version=1.0.0');
  ws.on('open', () => { Atomics.store(cell, 0, 1); Atomics.notify(cell, 0); });
  ws.on('message', (data) => { types.push(JSON.parse(String(data)).type); parentPort.postMessage(types); });
});
`;

test.serial('a session opening as maintenance turns on gets _maintenance once', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(CLIENT, { eval: true, workerData: { url: s.url, cell: cell.buffer } });
  let seen: string[] = [];
  worker.on('message', (m: string[]) => { seen = m; });
  try {
    const record = { date_start: '2026/01/01 00:00', date_end: '2026/01/02 00:00', messages: 'soon back' };
    activeSessions!.maintenance.update(record, true);
    // The client connects now; this thread goes on (posting its batch) once the client is open.
    worker.postMessage('go');
    t.is(Atomics.wait(cell, 0, 0, 10_000), 'ok');
    await waitFor(() => seen.includes('_maintenance'), 10_000, 'the maintenance frame');
    activeSessions!.maintenance.update(record, false);
    await waitFor(() => seen.includes('_maintenance_end'), 10_000, 'the end of maintenance');
    t.deepEqual(seen, ['_maintenance', '_maintenance_end']);
  } finally {
    await worker.terminate();
  }
});
