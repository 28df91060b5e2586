/**
 * Timers declared in `register` take their payload at the call, as a timer started at run time
 * does: one that cannot be encoded fails that plugin's register, naming it, and what the plugin
 * changes in it afterwards is not the timer's.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor, writePlugin } from './_server.ts';

async function withPlugin(body: string, fn: (dir: string) => Promise<void>): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-timers-'));
  try {
    await fn(writePlugin(tmp, 'tp', body));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

test.serial('a timer declared in register with a payload that cannot be encoded fails that plugin\'s register, naming it', async (t) => {
  await withPlugin(`const c: any = {}; c.self = c; api.event('tp.tick', () => {}); api.timers.after(5, 'tp.tick', c);`, async (dir) => {
    const err = await t.throwsAsync(async () => {
      const s = await startTestServer({}, [dir]);
      await s.stop();
      fs.rmSync(s.dir, { recursive: true, force: true });
    });
    // As invoke and a run-time timer refuse it (GSF_ERR_BAD_ARGUMENT at the call), and as a bad
    // delay or name in register fails the plugin's register.
    t.is(err?.message, "plugin 'tp' register failed: the payload cannot be encoded: it nests too deep or refers to itself (Maximum call stack size exceeded)");
    t.is((err?.cause as { code?: string } | undefined)?.code, 'GSF_ERR_BAD_ARGUMENT');
  });
});

test.serial('a timer declared in register fires with its payload as it was at the call, not as the plugin changed it later', async (t) => {
  await withPlugin(`api.event('tp.tick', (p: any) => { api.counters.update('tp', 'v', p.n); });
    const p = { n: 1 }; api.timers.after(0, 'tp.tick', p); p.n = 2;`, async (dir) => {
    const s = await startTestServer({}, [dir]);
    try {
      const v = await waitFor(() => native.counterReadInt('tp', 'v'), 5000, 'the timer');
      t.is(v, 1);
    } finally {
      await s.stop();
      fs.rmSync(s.dir, { recursive: true, force: true });
    }
  });
});
