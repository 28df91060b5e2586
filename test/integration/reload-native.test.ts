/**
 * Hot reload of a native plugin: a library rebuilt through CMake with another constant is
 * loaded from a fresh copy and answers the sessions already connected; its C globals start
 * again (the old copy keeps its own); a rebuilt library that is not the same plugin is refused.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer } from './_session.ts';
import { get, post, buildNativeReloadable, nativeReloadableCopy, NATIVE_RELOADABLE } from './_reload.ts';

const NAME = NATIVE_RELOADABLE;
const build = buildNativeReloadable;

test('a rebuilt native library is swapped in from a fresh copy, and one with another name is refused', async (t) => {
  const { dir, library } = nativeReloadableCopy();
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('msgpack');
  const j = await s.connect('json');
  try {
    t.deepEqual(await c.request('native.ping', {}), { generation: 1, calls: 1 });
    t.deepEqual(await j.request('native.ping', {}), { generation: 1, calls: 2 });
    const listed = (await get(s, `/v1/plugins/${NAME}`)).body;
    t.like(listed, { name: NAME, kind: 'native', version: '1.0.1', file: library, source_changed: false });

    build(dir, 2);
    t.true((await get(s, `/v1/plugins/${NAME}`)).body.source_changed as boolean);
    const reloaded = await post(s, `/v1/plugins/${NAME}/reload`);
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.like(reloaded.body, { reloaded: [{ name: NAME, kind: 'native', version: '1.0.2', previous: { version: '1.0.1', hash: listed.hash } }] });
    // The same sessions: the new copy answers, its own `calls` global starting again.
    t.deepEqual(await c.request('native.ping', {}), { generation: 2, calls: 1 });
    t.deepEqual(await j.request('native.ping', {}), { generation: 2, calls: 2 });
    t.like((await get(s, `/v1/plugins/${NAME}`)).body, { version: '1.0.2', file: library, source_changed: false, reloads: 1 });

    // Rebuilt as another plugin: refused before its init runs, the second copy keeps serving.
    build(dir, 3, 'someone-else');
    const refused = await post(s, '/v1/plugins/reload');
    t.is(refused.status, 422);
    t.like(refused.body, { error: 'GSF_ERR_RELOAD_FAILED', plugins: [NAME], stage: 'load', cause: 'GSF_ERR_PLUGIN_LOAD' });
    t.regex(refused.body.message as string, /the library is plugin 'someone-else', not 'native-reloadable' \(a reload keeps the plugin's name\)$/);
    t.deepEqual(await c.request('native.ping', {}), { generation: 2, calls: 3 });

    // And once more: each rebuild is a copy of its own.
    build(dir, 4);
    t.is((await post(s, '/v1/plugins/reload')).status, 200);
    t.deepEqual(await j.request('native.ping', {}), { generation: 4, calls: 1 });
  } finally {
    await c.close();
    await j.close();
    await s.stop();
  }
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});
