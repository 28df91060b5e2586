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
        if (op === 'fail') return Promise.reject(Object.assign(new Error('no such account'), { code: 'GSF_ERR_CLUSTER_NOT_FOUND' }));
        throw new Error('thrown on main');
      });
    });
  });
  try {
    t.deepEqual(await done, ['later 5', 3, { message: 'no such account', code: 'GSF_ERR_CLUSTER_NOT_FOUND' }, { message: 'thrown on main', code: null }]);
    t.deepEqual(channels, ['accounts'], 'one channel for every call');
  } finally {
    await worker.terminate();
  }
});
