/**
 * One rule for every service component: it runs only when the manifest lists it, and one
 * that needs the API service cannot be listed without it (README, component table).
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type GsfServer } from '../../src/index.ts';
import { loadManifest } from '../../src/config/manifest.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { fixtures } from './_server.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function start(components: Record<string, Record<string, unknown>>, plugins: string[] = []): Promise<{ server: GsfServer; log: () => string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-components-'));
  const logFile = path.join(dir, 'server.log');
  const list = Object.entries({ Logging: { log_file: logFile }, EventDispatcher: { event_threads_size: 1 }, ...components })
    .map(([name, args]) => ({ name, arguments: args }));
  const server = await startServer({ manifest: { components: list, plugins: plugins.map((p) => path.join(fixtures, 'plugins', p)) }, dir });
  return { server, log: () => fs.readFileSync(logFile, 'utf8') };
}

async function status(base: string, p: string): Promise<[number, unknown]> {
  const r = await fetch(`${base}${p}`);
  const text = await r.text();
  return [r.status, text === '' ? null : JSON.parse(text.startsWith('{') || text.startsWith('[') ? text : JSON.stringify(text))];
}

const API = { api_service_port: 0 };
const notFound = (p: string) => [404, { error: 'GSF_ERR_NOT_FOUND', message: `no route for GET ${p}` }];

test.serial('with only ApiService listed: profiling and status answer, counters, metrics, dashboard, configurations and the console page are 404', async (t) => {
  const { server } = await start({ ApiService: API });
  try {
    const base = `http://127.0.0.1:${server.api.port}`;
    for (const p of ['/v1/counters/', '/v1/counters/process/maxrss/', '/metrics', '/dashboard/', '/v1/configurations/', '/v1/configurations/v', '/console/']) {
      t.deepEqual(await status(base, p), notFound(p), p);
    }
    t.is((await status(base, '/v1/status'))[0], 200);
    t.is((await status(base, '/v1/counters/engine/event/profiling/summary/'))[0], 200);
    t.is(activeSessions, null);
  } finally {
    await server.stop();
  }
});

test.serial('listing CounterService and RuntimeConfiguration turns on their groups', async (t) => {
  const { server } = await start({ ApiService: API, CounterService: {}, RuntimeConfiguration: {} });
  try {
    const base = `http://127.0.0.1:${server.api.port}`;
    const [counters, body] = await status(base, '/v1/counters/process/refresh_interval/');
    t.is(counters, 200);
    t.deepEqual(body, { category: 'process', counter: 'refresh_interval', value: 1 });
    t.is((await status(base, '/metrics'))[0], 200);
    t.is((await status(base, '/dashboard/'))[0], 200);
    const [configurations, flags] = await status(base, '/v1/configurations/v');
    t.is(configurations, 200);
    t.deepEqual(flags, { v: { type: 'int32', desc: 'Log verbosity: verbose lines up to this level are written', value: '0' } });
  } finally {
    await server.stop();
  }
});

test.serial('without ApiService no API port opens, and the start line says so', async (t) => {
  const { server, log } = await start({});
  try {
    t.is(server.api.port, 0);
    t.regex(log(), /listening api=none websocket=none/);
  } finally {
    await server.stop();
  }
});

test.serial('a service listed without the API service it needs stops the start, naming both', async (t) => {
  for (const service of ['CounterService', 'RuntimeConfiguration']) {
    await t.throwsAsync(start({ [service]: {} }), {
      code: 'GSF_ERR_MANIFEST', message: `(inline manifest): ${service} needs the ApiService component; list ApiService as well`,
    } as never);
  }
});

test.serial('a plugin monitoring a counter needs CounterService', async (t) => {
  await t.throwsAsync(start({ ApiService: API }, ['monitored']), {
    message: "(inline manifest): plugin 'monitored' monitors counter 'mon/level', which needs the CounterService component; list CounterService",
  });
  const { server } = await start({ ApiService: API, CounterService: {} }, ['monitored']);
  try {
    t.deepEqual(await status(`http://127.0.0.1:${server.api.port}`, '/v1/counters/mon/twice_level/'), [200, { category: 'mon', counter: 'twice_level', value: 100 }]);
  } finally {
    await server.stop();
  }
});

test('the repository MANIFEST.json lists every service npm start serves', (t) => {
  const m = loadManifest(path.join(root, 'MANIFEST.json'));
  for (const c of ['ApiService', 'CounterService', 'RuntimeConfiguration', 'SessionService']) t.true(m.listed.has(c), c);
});
