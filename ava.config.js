// ava runs the unit and integration tests (npm test, npm run test:unit).
import os from 'node:os';

export default {
  extensions: { ts: 'module' },
  nodeArguments: ['--import=tsx'],
  // tsx's loader does not reach ava's worker threads on Node 20: each test file is a process.
  workerThreads: false,
  environmentVariables: { GSF_NATIVE_TESTING: '1' },
  files: ['test/**/*.test.ts'],
  timeout: '120s',
  // A test file spends much of its time waiting on the servers it starts (and on timeouts
  // uWebSockets.js keeps itself): two files more than the cores keep them busy
  // (GSF_TEST_CONCURRENCY overrides).
  concurrency: Number(process.env.GSF_TEST_CONCURRENCY) || os.availableParallelism() + 2,
};
