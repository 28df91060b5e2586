/**
 * The process-wide flush sequence (`outbound-channel.ts`, a shared Int32 cell) orders every
 * worker's outbound flushes. A long-running server passes 2^31 flushes (one per claim that
 * produced records): requests must still be answered, in order, after that.
 */
import test from 'ava';
import { featureCell } from '../../src/events/wake.ts';
import { currentFlushSeq } from '../../src/session/worker/outbound-writer.ts';
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
