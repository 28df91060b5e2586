/**
 * Object declarations of a native plugin and reload (its own file: a native plugin's name is
 * taken once per process).
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer } from './_session.ts';

import { buildNativeReloadableAsync as build, nativeReloadableCopy } from './_reload.ts';

/**
 * docs/guides/hot-reload.md, "Not reloadable": object declarations (`objects/*.json` in the
 * plugin's folder; a change of what they declare is refused with stage `objects`). A native
 * plugin's folder is the one holding its gsf-plugin.json, where the start reads its declarations
 * (not the build folder of its library): declarations added there, then a rebuild, are refused.
 */
test.serial('a native plugin whose objects/*.json changed is refused with stage objects when rebuilt and reloaded', async (t) => {
  const { dir } = nativeReloadableCopy();
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('json');
  try {
    t.deepEqual(await c.request('native.ping', {}), { generation: 1, calls: 1 });
    fs.mkdirSync(path.join(dir, 'objects'));
    fs.writeFileSync(path.join(dir, 'objects', 'types.json'), '{}');
    await build(dir, 2);
    const outcome = await s.server.reloadPlugins().then((o) => ({ reloaded: o.reloaded.map((r) => r.version) }),
      (e: { code?: string; details?: { stage?: string } }) => ({ error: e.code, stage: e.details?.stage }));
    t.deepEqual(outcome, { error: 'GSF_ERR_RELOAD_FAILED', stage: 'objects' });
  } finally {
    await c.close();
    await s.stop();
  }
});
