/**
 * A flag change reaches every thread at once (docs/reference/rest.md), also a retired event
 * thread where an event that awaited across a reload or a resize still finishes on the old code
 * (docs/guides/hot-reload.md): its thread's serve loop no longer turns, so its reads of flags
 * must see the change by themselves.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSessionServer, apiUrl } from './_session.ts';
import { waitFor } from './_server.ts';
import { newPluginDir, post, PLUGIN } from './_reload.ts';

/** `held` writes `started`, waits for the file `go`, then logs a line and replies what it reads of the flags. */
const register = (gate: string): string => `
    api.flags.define('probe_lvl', { type: 'int32', default: 1, desc: 'a game flag' });
    api.sessions.onMessage('held', async (_b, msg) => {
      const fs = await import('node:fs');
      const before = api.flags.get('probe_lvl');
      fs.writeFileSync(${JSON.stringify(path.join(gate, 'started'))}, '');
      while (!fs.existsSync(${JSON.stringify(path.join(gate, 'go'))})) await new Promise((r) => setTimeout(r, 5));
      api.log.info('held: an info line after the wait');
      msg.reply([before, api.flags.get('probe_lvl'), api.flags.get('v'), api.flags.get('minloglevel')]);
    });`;

for (const how of ['reload', 'resize', 'nothing else'] as const) {
  test.serial(`flags changed after ${how === 'nothing else' ? 'nothing else reach an awaiting event' : `a ${how} reach an event still awaiting on the retired thread`}`, async (t) => {
    const gate = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-gate-'));
    const dir = newPluginDir({ version: '1.0.0', register: register(gate) });
    const s = await startSessionServer({ RuntimeConfiguration: { additional_configurations: ['probe_lvl'] }, EventDispatcher: { event_threads_size: 1 } }, [dir]);
    const c = await s.connect('json');
    const put = async (name: string, value: number): Promise<number> => (await fetch(`${apiUrl(s)}/v1/configurations/${name}/${value}`, { method: 'PUT' })).status;
    try {
      const reply = c.request('held', {});
      await waitFor(() => fs.existsSync(path.join(gate, 'started')), 10000, 'the handler awaiting');
      if (how === 'reload') t.is((await post(s, `/v1/plugins/${PLUGIN}/reload?force=true`)).status, 200);
      else if (how === 'resize') t.is(await put('event_threads_size', 2), 200);
      t.is(await put('probe_lvl', 77), 200);
      t.is(await put('v', 2), 200);
      t.is(await put('minloglevel', 2), 200);
      fs.writeFileSync(path.join(gate, 'go'), '');
      t.deepEqual(await reply, [1, 77, 2, 2]);
      // minloglevel 2 (errors only) holds on the retired thread too.
      t.false(s.logs().some((l) => l.includes('held: an info line after the wait')));
    } finally {
      await c.close();
      await s.stop();
      fs.rmSync(gate, { recursive: true, force: true });
    }
  });
}
