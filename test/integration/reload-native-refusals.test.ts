/**
 * Native reloads that are refused leave nothing behind:
 * - A reload that stages a native plugin's fresh copy (its init runs, registering a timeout
 *   handler with user data) and is then refused because another plugin of the same reload does
 *   not load: the refused copy never serves, so what gsf holds for it is released through its
 *   destructor and its on_unload runs, at once (native-lifecycle counts the user data it makes
 *   and every piece gsf drops).
 * - A copy whose init failed leaves no declarations for the next copy: a later good rebuild
 *   declaring the same flag loads and serves.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';
import { startSessionServer } from './_session.ts';
import { post, writePlugin, PLUGIN, buildNativeReloadable, nativeReloadableCopy } from './_reload.ts';

const value = (name: string): number => native.counterValue('lifecycle', name) ?? 0;

/** Replaces the library with a new file of other bytes (one more at the end): a rebuild, as the reload sees it. */
function rebuild(library: string, extra: number): void {
  const next = `${library}.next`;
  fs.writeFileSync(next, Buffer.concat([fs.readFileSync(library), Buffer.alloc(extra)]));
  fs.renameSync(next, library);
}

test.serial('a refused reload releases the user data its staged native copy registered in init', async (t) => {
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

/** The fixture's source with an init that declares flag `reload_probe_level` (and fails in generation 2). */
function declaringSource(dir: string): void {
  const file = path.join(dir, 'reload_native.c');
  const source = fs.readFileSync(file, 'utf8');
  const init = `static gsf_type_status init(const gsf_type_host_api* h, gsf_type_call call) {
  static const uint8_t zero = 0;
  gsf_type_status s;
  host = h;
  if ((s = host->register_message(call, gsf_str("native.ping"), on_ping, NULL)) != GSF_STATUS_OK) return s;
  if ((s = host->flag_define(call, gsf_str("reload_probe_level"), GSF_FLAG_INT32, gsf_bytes(&zero, 1), gsf_str("a probe flag"))) != GSF_STATUS_OK) return s;
  if (RELOAD_GENERATION == 2) {
    host->set_error(call, gsf_str("generation 2 fails on purpose"));
    return GSF_STATUS_UNAVAILABLE;
  }
  return GSF_STATUS_OK;
}`;
  const replaced = source.replace(/static gsf_type_status init\([\s\S]*?\n}\n/, `${init}\n`);
  if (replaced === source) throw new Error('the fixture has no init to replace');
  fs.writeFileSync(file, replaced);
}

test.serial('after a refused native reload whose init failed, the next good rebuild loads and serves', async (t) => {
  const { dir } = nativeReloadableCopy();
  declaringSource(dir);
  buildNativeReloadable(dir, 1);
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('msgpack');
  try {
    t.deepEqual(await c.request('native.ping', {}), { generation: 1, calls: 1 });

    buildNativeReloadable(dir, 2);
    const refused = await post(s, '/v1/plugins/reload');
    t.is(refused.status, 422, JSON.stringify(refused.body));
    t.regex(refused.body.message as string, /init failed: UNAVAILABLE: generation 2 fails on purpose/);
    t.deepEqual(await c.request('native.ping', {}), { generation: 1, calls: 2 });

    buildNativeReloadable(dir, 3);
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.deepEqual(await c.request('native.ping', {}), { generation: 3, calls: 1 });
  } finally {
    await c.close();
    await s.stop();
  }
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});
