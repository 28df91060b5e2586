/**
 * A reload that stages a native plugin's fresh copy (its init runs, registering a timeout
 * handler with user data) and is then refused because another plugin of the same reload does
 * not load: the refused copy never serves, so what gsf holds for it is released through its
 * destructor and its on_unload runs, at once. The fixture counts every box of user data it
 * makes and every one gsf drops.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { post, writePlugin, PLUGIN } from './_reload.ts';

const value = (name: string): number => native.counterValue('lifecycle', name) ?? 0;

/** Replaces the library with a new file of other bytes (one more at the end): a rebuild, as the reload sees it. */
function rebuild(library: string, extra: number): void {
  const next = `${library}.next`;
  fs.writeFileSync(next, Buffer.concat([fs.readFileSync(library), Buffer.alloc(extra)]));
  fs.renameSync(next, library);
}

test('a refused reload releases the user data its staged native copy registered in init', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-refused-native-'));
  const nativeDir = path.join(root, 'native-lifecycle');
  fs.mkdirSync(path.join(nativeDir, 'build'), { recursive: true });
  const src = path.join(fixtures, 'native-plugins', 'native-lifecycle');
  fs.copyFileSync(path.join(src, 'gsf-plugin.json'), path.join(nativeDir, 'gsf-plugin.json'));
  const library = path.join(nativeDir, 'build', 'native-lifecycle.so');
  fs.copyFileSync(path.join(src, 'build', 'native-lifecycle.so'), library);
  const managedDir = path.join(root, PLUGIN);
  writePlugin(managedDir, { version: '1.0.0' });

  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, shutdown_drain_timeout_in_ms: 5000 } }, [nativeDir, managedDir]);
  try {
    t.is(value('made'), 1, "the running copy's timeout handler's user data");
    t.is(value('dropped'), 0);

    // Both change; the managed plugin's new version does not compile: the whole reload is refused.
    rebuild(library, 1);
    writePlugin(managedDir, { version: '2.0.0', raw: 'export default (((;\n' });
    const refused = await post(s, '/v1/plugins/reload');
    t.is(refused.status, 422, JSON.stringify(refused.body));
    t.like(refused.body, { error: 'GSF_ERR_RELOAD_FAILED', plugins: [PLUGIN] });
    t.is(value('made'), 2, "the staged copy's init ran and made its timeout handler's user data");
    // The refused copy never serves: its user data is released and its on_unload runs at once.
    t.is(value('dropped'), 1);
    t.is(value('unloaded'), 1);

    // The managed plugin is fixed: this reload goes through, and the first copy is retired.
    writePlugin(managedDir, { version: '3.0.0' });
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    await waitFor(() => value('unloaded') === 2, 10000, "the first copy's on_unload");
    t.is(value('made'), 3, 'three copies ran init');
    // Only the serving copy still holds user data: the first copy was retired, the refused one never served.
    t.is(value('dropped'), value('made') - 1, 'user data gsf holds for copies that no longer serve is released');
  } finally {
    await s.stop();
  }
  fs.rmSync(root, { recursive: true, force: true });
});
