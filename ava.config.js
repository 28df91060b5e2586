// ava runs the unit and integration tests (npm test, npm run test:unit).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Every temporary file of a run (servers' folders and logs, databases, packed tarballs) goes under
// one folder, removed when the run passes and kept, with its path printed, when it fails.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-tests-'));
// Readable by others, as /tmp is: the tests' PostgreSQL clusters run as nobody in folders of their own.
fs.chmodSync(tmp, 0o755);
// tsx keeps its transform cache in TMPDIR/tsx-<uid>: the run's TMPDIR links to the lasting one.
const tsxCache = `tsx-${os.userInfo().uid}`;
fs.mkdirSync(path.join(os.tmpdir(), tsxCache), { recursive: true });
fs.symlinkSync(path.join(os.tmpdir(), tsxCache), path.join(tmp, tsxCache));
process.once('exit', (code) => {
  if (code === 0) fs.rmSync(tmp, { recursive: true, force: true });
  else process.stderr.write(`ava: the temporary files of this run are kept in ${tmp}\n`);
});

export default {
  // Each test file and what it imports (gsf's sources, fixtures) go through tsx's require hook,
  // compiled to CommonJS in the test's own thread. Through tsx's ES module loader every import is
  // a round trip to Node's loader thread: the whole run took a fifth more CPU time that way.
  // gsf follows how it was loaded (src/index.ts startServer), as its event threads do.
  extensions: { ts: 'commonjs' },
  nodeArguments: ['--require=tsx/cjs'],
  // tsx's hooks do not reach ava's worker threads on Node 20: each test file is a process.
  workerThreads: false,
  environmentVariables: { GSF_NATIVE_TESTING: '1', TMPDIR: tmp },
  files: ['test/**/*.test.ts'],
  timeout: '120s',
  // A test file spends much of its time waiting on the servers it starts (and on timeouts
  // uWebSockets.js keeps itself): two files more than the cores keep them busy
  // (GSF_TEST_CONCURRENCY overrides).
  concurrency: Number(process.env.GSF_TEST_CONCURRENCY) || os.availableParallelism() + 2,
};
