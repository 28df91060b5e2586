/**
 * Maintenance turned on while a client connects: the client gets `_maintenance` once (on
 * connect, or with every session), never twice. With I/O threads the gate reaches a thread
 * (a command) before the frame to every session (the next batch), so a session that opens in
 * between is sent the frame both ways. The client runs on a worker thread so that it can
 * connect while the main thread has not yet posted its batch.
 */
import { Worker } from 'node:worker_threads';
import test from 'ava';
import { activeSessions } from '../../src/session/main/feature.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer | undefined;
test.afterEach.always(async () => {
  await s?.stop();
  s = undefined;
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
