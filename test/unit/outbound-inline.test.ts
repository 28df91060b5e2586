/**
 * A frame too large for a worker's outbound ring travels with the flush message, and the ring
 * holds a record pointing to it. When the ring is full just then, making room flushes first:
 * the frame must still arrive, in its place, and nothing be reported missing.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import test from 'ava';
import { workerExecArgv } from '../../src/events/main/dispatcher.ts';
import type { ChannelHello } from '../../src/events/types.ts';
import { OutboundReader, type OutboundTarget } from '../../src/session/main/outbound-reader.ts';
import { setOutboundListening } from '../../src/session/worker/outbound-writer.ts';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'outbound', 'ring-writer.ts');
const SESSION = 2 ** 40;
const CAPACITY = 4096;
const SMALL = 100; // 128-byte records: 32 fill the ring
const LARGE = 2000; // above a quarter of the ring: carried by the flush message

/** Frames as they reached the target: [first byte, length], and any error it was told. */
function recorder(): { frames: Array<[number, number]>; errors: string[]; target: OutboundTarget } {
  const frames: Array<[number, number]> = [];
  const errors: string[] = [];
  const add = (id: number, frame: Uint8Array): void => {
    if (id === SESSION) frames.push([frame[0]!, frame.byteLength]);
  };
  return {
    frames, errors,
    target: {
      sendOne: (id, frame) => add(id, frame),
      sendRun: (id, write) => write((frame) => add(id, frame)),
      close: () => errors.push('close'),
      group: () => errors.push('group'),
      publish: () => errors.push('publish'),
      broadcast: () => errors.push('broadcast'),
      error: (message) => errors.push(message),
    },
  };
}

async function run(mode: 'inline' | 'held'): Promise<{ frames: Array<[number, number]>; errors: string[] }> {
  setOutboundListening(true);
  const { frames, errors, target } = recorder();
  const reader = new OutboundReader(target, 50);
  const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(fixture)});`;
  const worker = new Worker(code, {
    eval: true, execArgv: workerExecArgv(), workerData: { mode, capacity: CAPACITY, session: SESSION, small: SMALL, large: LARGE },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: ChannelHello | string) => {
        if (typeof m === 'object' && m.type === 'channel') reader.accept(m);
        else if (m === 'ready') worker.postMessage('go');
      });
      worker.on('error', reject);
      const deadline = Date.now() + 10_000;
      const check = (): void => {
        if (frames.length === CAPACITY / 128 + 1 || errors.length > 0) resolve();
        else if (Date.now() > deadline) reject(new Error(`${frames.length} frames arrived`));
        else setTimeout(check, 5);
      };
      check();
    });
    // Anything that would arrive late (a misplaced record) has had its chance too.
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    await worker.terminate();
    reader.stop();
    setOutboundListening(false);
  }
  return { frames, errors };
}

const small = Array.from({ length: CAPACITY / 128 }, (_, i): [number, number] => [i, SMALL]);

test.serial('a large frame written when the ring is full arrives after the frames before it', async (t) => {
  const { frames, errors } = await run('inline');
  t.deepEqual(errors, []);
  t.deepEqual(frames, [...small, [255, LARGE]]);
});

test.serial('a held large frame written back when the ring is full arrives after the frames before it', async (t) => {
  const { frames, errors } = await run('held');
  t.deepEqual(errors, []);
  t.deepEqual(frames, [...small, [255, LARGE]]);
});
