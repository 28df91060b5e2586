/**
 * Main-thread plugin callbacks written `async` whose promise rejects: a timeout handler (where
 * SPEC 6.3 puts a forced logout, which awaits) is logged as one that throws is, and an async
 * callable counter reads as no value; neither leaves an unhandled rejection to end the process.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import { startTestServer, waitFor, writePlugin } from './_server.ts';
import { client } from './_http.ts';
import { native } from '../../src/native.ts';

test.serial('an async timeout handler that rejects is logged and the server serves on; an async callable counter has no value', async (t) => {
  const dir = fs.mkdtempSync(`${os.tmpdir()}/gsf-async-main-`);
  const plugin = writePlugin(dir, 'am', `
    api.onEventTimeout(async (name) => { await Promise.resolve(); throw new Error('logout failed for ' + name); });
    api.event('am.held', () => new Promise(() => undefined));
    api.event('am.quick', () => { api.counters.increase('am', 'quick', 1); });
    api.counters.registerCallable('am', 'later', 'an async callback', async () => { throw new Error('no value yet'); });`);
  const s = await startTestServer({ EventDispatcher: { event_timeout_in_ms: 200 }, CounterService: {} }, [plugin]);
  try {
    s.server.invoke('am.held');
    const line = await waitFor(() => s.logs().find((l) => l.includes('GSF_ERR_HANDLER_FAILED')), 10000, 'the handler failure');
    t.true(line.endsWith("GSF_ERR_HANDLER_FAILED: plugin 'am' timeout handler 'am.held' failed: logout failed for am.held"), line);
    const read = await client(s.server.api.port).get('/v1/counters/am/later/');
    t.is(read.status, 204);
    // Still serving: an event runs after both.
    s.server.invoke('am.quick');
    t.is(await waitFor(() => native.counterValue('am', 'quick'), 10000, 'an event after them'), 1);
  } finally {
    await s.stop();
  }
});
