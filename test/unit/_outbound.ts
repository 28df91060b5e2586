/**
 * The outbound ring end to end, for unit tests: a fixture writer (test/fixtures/outbound/) on a
 * worker thread, the main thread's reader, and the frames that reach the test's session.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workerExecArgv } from '../../src/events/main/dispatcher.ts';
import type { ChannelHello } from '../../src/events/types.ts';
import { OutboundReader, type OutboundTarget } from '../../src/session/main/outbound-reader.ts';
import { setOutboundListening } from '../../src/session/worker/outbound-writer.ts';

export const SESSION = 2 ** 40;
/** The first byte of the frame a fixture writes last, outside events: once it is here, everything before it is too. */
export const MARKER = 200;

/** What reached the session: [first byte, length] per frame; and every error the reader reported. */
export interface Seen {
  frames: Array<[number, number]>;
  errors: string[];
}

export interface RingWorker {
  seen: Seen;
  reader: OutboundReader;
  worker: Worker;
  /** Polls until `done` holds or an error was reported (10 s at most). */
  until(done: (seen: Seen) => boolean): Promise<void>;
  stop(): Promise<void>;
}

function recorder(): Seen & { target: OutboundTarget } {
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

/** Starts fixture `name` with `data` (and SESSION); resolves once it is ready and the reader holds its ring. */
export async function startRingWorker(name: string, data: Record<string, unknown>): Promise<RingWorker> {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'outbound', name);
  setOutboundListening(true);
  const { frames, errors, target } = recorder();
  const seen = { frames, errors };
  const reader = new OutboundReader(target, 50);
  const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(file)});`;
  const worker = new Worker(code, { eval: true, execArgv: workerExecArgv(), workerData: { ...data, session: SESSION } });
  const poll = async (done: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within 10 s (${frames.length} frames, errors ${JSON.stringify(errors)})`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  let ready = false;
  worker.on('message', (m: ChannelHello | string) => {
    if (typeof m === 'object' && m.type === 'channel') reader.accept(m);
    else if (m === 'ready') ready = true;
  });
  const failed = new Promise<never>((_, reject) => worker.once('error', reject));
  // Its ring hello comes on the channel, before the fixture says it is ready to write.
  await Promise.race([poll(() => ready && reader.heldRings === 1, 'the ring'), failed]);
  return {
    seen, reader, worker,
    until: (done) => Promise.race([poll(() => done(seen) || errors.length > 0, 'the frames'), failed]),
    stop: async () => {
      await worker.terminate();
      reader.stop();
      setOutboundListening(false);
    },
  };
}
