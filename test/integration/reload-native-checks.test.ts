/**
 * A native library that is not whole when a reload reads it (a build still writing it) is
 * refused like any broken new version: never loaded, the running copy serves on. (Its own file:
 * the fixture's plugin stays loaded in the process after its server stops.)
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer } from './_session.ts';
import { post, buildNativeReloadable, nativeReloadableCopy, NATIVE_RELOADABLE } from './_reload.ts';

const NAME = NATIVE_RELOADABLE;
const build = buildNativeReloadable;

test('a library cut short swapped in for a live reload is refused with 422; the running copy keeps serving', async (t) => {
  const { dir, library } = nativeReloadableCopy();
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('msgpack');
  try {
    t.deepEqual(await c.request('native.ping', {}), { generation: 1, calls: 1 });
    // What a half-written build leaves: the first 4 KiB of the new library.
    build(dir, 2);
    const whole = fs.readFileSync(library);
    fs.writeFileSync(library, whole.subarray(0, 4096));
    const refused = await post(s, '/v1/plugins/reload');
    t.is(refused.status, 422, JSON.stringify(refused.body));
    t.like(refused.body, { error: 'GSF_ERR_RELOAD_FAILED', plugins: [NAME], stage: 'load', cause: 'GSF_ERR_PLUGIN_LOAD' });
    t.regex(refused.body.message as string, /: truncated: segment \d+ \(bytes \d+ to \d+\) ends past the end of the file \(the file has 4096 bytes/);
    t.deepEqual(await c.request('native.ping', {}), { generation: 1, calls: 2 });
    // The build finishes: the next reload loads it.
    fs.writeFileSync(library, whole);
    t.is((await post(s, '/v1/plugins/reload')).status, 200);
    t.deepEqual(await c.request('native.ping', {}), { generation: 2, calls: 1 });
  } finally {
    await c.close();
    await s.stop();
  }
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});
