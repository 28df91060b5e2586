import test from 'ava';
import { Worker } from 'node:worker_threads';
import type { ChannelHello } from '../../../src/events/types.ts';
import { serveMainCalls } from '../../../src/events/call-channel.ts';

test('worker-to-main calls: answers reach their own callers, in any order, and errors keep their code', async (t) => {
  const worker = new Worker(new URL('../../fixtures/call-channel/boot.mjs', import.meta.url), { execArgv: ['--import', 'tsx'] });
  const channels: string[] = [];
  const done = new Promise<unknown>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: ChannelHello | { type: 'done'; results: unknown }) => {
      if (m.type === 'done') {
        resolve(m.results);
        return;
      }
      channels.push(m.channel);
      serveMainCalls<string>(m.port, (op, args) => {
        if (op === 'add') return (args[0] as number) + (args[1] as number);
        // Answered after the calls made after it.
        if (op === 'later') return new Promise((resolve) => setTimeout(() => resolve(`later ${String(args[0])}`), 20));
        if (op === 'unsendable') return Promise.resolve({ run: () => 1 });
        if (op === 'fail') return Promise.reject(Object.assign(new Error('no such account'), { code: 'GSF_ERR_CLUSTER_NOT_FOUND' }));
        throw new Error('thrown on main');
      });
    });
  });
  try {
    const results = await done as unknown[];
    t.deepEqual(results.slice(0, 4), ['later 5', 3, { message: 'no such account', code: 'GSF_ERR_CLUSTER_NOT_FOUND' }, { message: 'thrown on main', code: null }]);
    // Arguments or an answer that cannot cross threads: GSF_ERR_BAD_ARGUMENT saying which, and the channel goes on.
    t.like(results[4], { code: 'GSF_ERR_BAD_ARGUMENT' });
    t.regex((results[4] as { message: string }).message, /^accounts call 'add': the arguments cannot be sent to the main thread \(.+could not be cloned/);
    t.like(results[5], { code: 'GSF_ERR_BAD_ARGUMENT' });
    t.regex((results[5] as { message: string }).message, /^the answer to 'unsendable' cannot be sent to the worker \(.+could not be cloned/);
    t.is(results[6], 4);
    t.deepEqual(channels, ['accounts'], 'one channel for every call');
  } finally {
    await worker.terminate();
  }
});
