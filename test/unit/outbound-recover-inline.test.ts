/**
 * When an event worker is ended (an event hung past its timeout), what its finished events
 * produced is still delivered (`OutboundReader.recover`, up to the ring's committed mark). A
 * frame too large for the ring is such a product too: it must arrive, in its place.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import test from 'ava';
import { workerExecArgv } from '../../src/events/main/dispatcher.ts';
import type { ChannelHello } from '../../src/events/types.ts';
import { OutboundReader, type OutboundTarget } from '../../src/session/main/outbound-reader.ts';
import { setOutboundListening } from '../../src/session/worker/outbound-writer.ts';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'outbound', 'ring-writer-ended.ts');
const SESSION = 2 ** 40;
const CAPACITY = 4096;
const SMALL = 100;
const LARGE = 2000; // above a quarter of the ring: not kept in it

test.serial('a large frame of a finished event is delivered when its worker is ended before the flush', async (t) => {
  setOutboundListening(true);
  const frames: Array<[number, number]> = [];
  const errors: string[] = [];
  const add = (id: number, f: Uint8Array): void => { if (id === SESSION) frames.push([f[0]!, f.byteLength]); };
  const target: OutboundTarget = {
    sendOne: (id, f) => add(id, f),
    sendRun: (id, write) => write((f) => add(id, f)),
    close: () => errors.push('close'),
    group: () => errors.push('group'),
    publish: () => errors.push('publish'),
    broadcast: () => errors.push('broadcast'),
    error: (message) => errors.push(message),
  };
  const reader = new OutboundReader(target, 50);
  const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(fixture)});`;
  // Set by the worker once its event B has started (A's records are final and were posted).
  const started = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(code, {
    eval: true, execArgv: workerExecArgv(), workerData: { capacity: CAPACITY, session: SESSION, small: SMALL, large: LARGE, started: started.buffer },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: ChannelHello | string) => {
        if (typeof m === 'object' && m.type === 'channel') reader.accept(m);
        else if (m === 'ready') resolve();
      });
      worker.on('error', reject);
    });
    // The ring has reached the reader (its hello comes on the port, before the channel is used).
    const deadline = Date.now() + 10_000;
    while (reader.heldRings === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    t.is(reader.heldRings, 1);
    // Event A runs and B hangs while this thread does not yield, so whatever the worker posted
    // on its port is still waiting there when the dispatcher ends it and delivers what its
    // finished events produced.
    worker.postMessage('go');
    t.is(Atomics.wait(started, 0, 0, 10_000), 'ok');
    reader.recover(reader.reserve(worker.threadId), true);
  } finally {
    await worker.terminate();
    reader.stop();
    setOutboundListening(false);
  }
  t.deepEqual(errors, []);
  t.deepEqual(frames, [[1, SMALL], [255, LARGE], [2, SMALL]]);
});
