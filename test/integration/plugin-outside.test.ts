/**
 * A plugin folder anywhere on disk, named by path in the manifest: it loads on the main thread
 * and in the event workers with no package.json beside it, and its `gsf` is the server's own.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { startSessionServer } from './_session.ts';
import { writeOutsidePlugin } from './_outside-plugin.ts';

test.serial('a plugin folder outside the repository loads on every thread and imports gsf', async (t) => {
  const dir = writeOutsidePlugin(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-outside-')), 'greeter'));
  try {
    t.false(fs.existsSync(path.join(dir, 'package.json')));
    const s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } }, [dir]);
    try {
      t.deepEqual(s.server.thread.plugins.map((p) => `${p.name}@${p.version}`), ['greeter@2.1.0']);
      t.is(native.counterGet('greeter', 'same_gsf_on_main')?.value, 1);
      const c = await s.connect('json');
      // Several requests, so both workers are likely to answer some; each must see the same gsf.
      const answers = await Promise.all(['ada', 'bo', 'cy', 'di'].map((name) => c.request('greeter.hello', { name })));
      t.deepEqual(answers, ['ada', 'bo', 'cy', 'di'].map((name) => ({ text: `hello, ${name}`, sameGsf: true })));
      await c.close();
    } finally {
      await s.stop();
    }
  } finally {
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
});
