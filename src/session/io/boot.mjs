// Entry of a session I/O thread. A file, not eval'd code, so that the TypeScript loader
// given in execArgv is active; through require, because on Node 20 the loader's CommonJS hook
// reaches worker threads and its ESM hook does not (event workers load plugins the same way).
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';

createRequire(import.meta.url)(workerData.entry);
