/**
 * The light-load floor of any design that runs handlers off the I/O thread: a raw
 * uWebSockets.js echo whose frames make one round trip through a worker thread, by the
 * cheapest means Node offers each way.
 * - main → worker: the frame is copied into a shared ring and a sleeping worker is woken with
 *   `Atomics.notify` (a futex; the worker blocks in `Atomics.wait`, as gsf's event threads do);
 * - worker → main: `postMessage`, which wakes the main event loop (as gsf's flush note does).
 * No decoding, no events, no queueing by tag. What this costs per message beyond the raw echo
 * is what the two thread hops cost on the machine, whatever the server does around them.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import uWS from 'uWebSockets.js';
import { workerExecArgv } from '../src/events/main/dispatcher.ts';
import { HEAD, type Reply, SLEEPING, SLOT_BYTES, SLOT_HEADER, SLOTS, TAIL } from './session-hop-worker.ts';

/** Starts the echo on 127.0.0.1; resolves with its port. */
export function uwsHopEcho(): Promise<number> {
  const buffer = new SharedArrayBuffer(16 + SLOTS * SLOT_BYTES);
  const control = new Int32Array(buffer, 0, 4);
  const slots = new Uint8Array(buffer, 16);
  const view = new DataView(buffer, 16);
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), 'session-hop-worker.ts');
  const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(file)}).serve();`;
  const worker = new Worker(code, { eval: true, workerData: buffer, execArgv: workerExecArgv() });
  const sockets = new Map<number, uWS.WebSocket<{ id: number }>>();
  let nextId = 1;
  let head = 0;
  worker.on('message', (r: Reply) => sockets.get(r.id)?.send(r.frame, r.binary));
  worker.unref();
  return new Promise((resolve, reject) => {
    const app = uWS.App().ws<{ id: number }>('/*', {
      open: (ws) => {
        const id = nextId++;
        ws.getUserData().id = id;
        sockets.set(id, ws);
      },
      close: (ws) => { sockets.delete(ws.getUserData().id); },
      message: (ws, message, isBinary) => {
        // A full ring or an oversized frame is echoed at once: light load never comes near either.
        if (head - Atomics.load(control, TAIL) >= SLOTS || message.byteLength > SLOT_BYTES - SLOT_HEADER) {
          ws.send(message, isBinary);
          return;
        }
        const at = (head % SLOTS) * SLOT_BYTES;
        view.setInt32(at, ws.getUserData().id, true);
        view.setInt32(at + 4, isBinary ? 1 : 0, true);
        view.setInt32(at + 8, message.byteLength, true);
        slots.set(new Uint8Array(message), at + SLOT_HEADER);
        head++;
        Atomics.store(control, HEAD, head);
        if (Atomics.load(control, SLEEPING) === 1) Atomics.notify(control, HEAD, 1);
      },
    });
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('uWS hop echo: cannot listen'));
      resolve(uWS.us_socket_local_port(socket));
    });
  });
}
