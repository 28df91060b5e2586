/** The worker of bench/session-hop-baseline.ts: echoes each frame of the shared ring back by `postMessage`. */
import { parentPort, workerData } from 'node:worker_threads';

export const SLOTS = 1024;
export const SLOT_BYTES = 4096;
/** Control cells: frames written, frames read, and 1 while the worker sleeps. */
export const HEAD = 0;
export const TAIL = 1;
export const SLEEPING = 2;
/** Per slot: session id, binary flag and length (Int32 each), then the frame. */
export const SLOT_HEADER = 12;

export interface Reply { id: number; binary: boolean; frame: Uint8Array }

/** Serves the ring in `workerData` until the process exits. */
export function serve(): void {
  const buffer = workerData as SharedArrayBuffer;
  const control = new Int32Array(buffer, 0, 4);
  const slots = new Uint8Array(buffer, 16);
  const view = new DataView(buffer, 16);
  let tail = 0;
  for (;;) {
    const head = Atomics.load(control, HEAD);
    if (head === tail) {
      Atomics.store(control, SLEEPING, 1);
      if (Atomics.load(control, HEAD) === tail) Atomics.wait(control, HEAD, tail);
      Atomics.store(control, SLEEPING, 0);
      continue;
    }
    const at = (tail % SLOTS) * SLOT_BYTES;
    const length = view.getInt32(at + 8, true);
    const reply: Reply = { id: view.getInt32(at, true), binary: view.getInt32(at + 4, true) === 1, frame: slots.slice(at + SLOT_HEADER, at + SLOT_HEADER + length) };
    tail++;
    Atomics.store(control, TAIL, tail);
    parentPort!.postMessage(reply, [reply.frame.buffer as ArrayBuffer]);
  }
}

