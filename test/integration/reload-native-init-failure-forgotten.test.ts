/**
 * A native reload whose new copy's init declares a flag and then fails is refused; what that
 * copy declared is forgotten with it, so the next rebuild, which declares the same flag and
 * succeeds, is loaded and serves. The library is the native-reload fixture with an init that
 * declares a flag (generation 2's init then fails), built with the fixture's CMake command.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer } from './_session.ts';
import { post, buildNativeReloadable, nativeReloadableCopy } from './_reload.ts';

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

test('after a refused native reload whose init failed, the next good rebuild loads and serves', async (t) => {
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
