import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { startServer } from '../src/index.ts';
import { transact } from '../src/objects/plugin-api.ts';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-'));
const server = await startServer({ manifest: { components: [
  { name: 'EventDispatcher', arguments: { event_threads_size: 1 } }, { name: 'ApiService', arguments: { api_service_port: 0 } },
  { name: 'Logging', arguments: { minloglevel: 1 } }, { name: 'ObjectStore', arguments: {} } ],
  plugins: ['/work/main/bench/plugins/objects-bench'] }, dir });
await transact((tx) => { for (let i = 0; i < 10000; i++) tx.create('BenchAccount', { name: `a${i}`, coins: 1000 }, { id: `a${i}` }); });
const ids = Array.from({ length: 10000 }, (_, i) => `a${i}`);
for (let r = 0; r < 8; r++) {
  const t0 = performance.now();
  await transact((tx) => { let n = 0; for (const id of ids) if (tx.fetchCached('BenchAccount', id)) n++; return n; });
  console.log('fetchCached us', ((performance.now() - t0) * 1000 / ids.length).toFixed(3));
}
await server.stop(); process.exit(0);
