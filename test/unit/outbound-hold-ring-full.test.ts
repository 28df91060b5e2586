/**
 * An awaiting event's operations are held, and dropped if it times out (`OutboundWriter.hold`,
 * `discard`). An event that found the ring full of an earlier event's records made room
 * mid-event: the earlier event's records go to the main thread, the event's own stay held.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import test from 'ava';
import { workerExecArgv } from '../../src/events/main/dispatcher.ts';
import type { ChannelHello } from '../../src/events/types.ts';
import { OutboundReader, type OutboundTarget } from '../../src/session/main/outbound-reader.ts';
import { setOutboundListening } from '../../src/session/worker/outbound-writer.ts';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'outbound', 'ring-writer-hold.ts');
const SESSION = 2 ** 40;
const CAPACITY = 4096;
const SMALL = 100;
const LARGE = 2000; // above a quarter of the ring: carried by the flush message

async function run(mode: 'discard' | 'release' | 'finish'): Promise<{ frames: number[]; errors: string[] }> {
  setOutboundListening(true);
  const frames: number[] = [];
  const errors: string[] = [];
  const add = (id: number, f: Uint8Array): void => { if (id === SESSION) frames.push(f[0]!); };
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
  const worker = new Worker(code, {
    eval: true, execArgv: workerExecArgv(), workerData: { capacity: CAPACITY, session: SESSION, small: SMALL, large: LARGE, mode },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: ChannelHello | string) => {
        if (typeof m === 'object' && m.type === 'channel') reader.accept(m);
        else if (m === 'ready') worker.postMessage('go');
      });
      worker.on('error', reject);
      const deadline = Date.now() + 10_000;
      // The marker frame comes last: once it is here, everything before it is too.
      const check = (): void => {
        if (frames.includes(200)) resolve();
        else if (Date.now() > deadline) reject(new Error(`${frames.length} frames arrived`));
        else setTimeout(check, 5);
      };
      check();
    });
  } finally {
    await worker.terminate();
    reader.stop();
    setOutboundListening(false);
  }
  return { frames, errors };
}

const first = [240, ...Array.from({ length: Math.floor((CAPACITY - 24) / 128) }, (_, i) => i)];

test.serial('an event that timed out after making room mid-event has none of its frames delivered', async (t) => {
  const { frames, errors } = await run('discard');
  t.deepEqual(errors, []);
  t.deepEqual(frames, [...first, 200]);
});

test.serial('an event that finished after making room mid-event has its frames delivered in order, the large one too', async (t) => {
  const { frames, errors } = await run('release');
  t.deepEqual(errors, []);
  t.deepEqual(frames, [...first, 250, 100, 200]);
});

test.serial('an event that made room mid-event and did not await has its frames delivered in order, the large one too', async (t) => {
  const { frames, errors } = await run('finish');
  t.deepEqual(errors, []);
  t.deepEqual(frames, [...first, 250, 100, 200]);
});
