/**
 * `--watch` and native plugins (docs/guides/hot-reload.md): a rebuild is swapped in without a
 * POST, also after a clean build that deleted and wrote again the library's folder.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { watchPlugins } from '../../src/plugins/reload-watch.ts';
import { buildNativeReloadableAsync as build, nativeReloadableCopy } from './_reload.ts';

test.serial('a native plugin rebuilt under --watch is reloaded, also after a clean build that re-creates its build folder', async (t) => {
  const { dir } = nativeReloadableCopy();
  const s = await startSessionServer({}, [dir]);
  const c = await s.connect('json');
  const stop = watchPlugins(s.server, s.server.thread.log, 50);
  const generation = async () => ((await c.request('native.ping', {})) as { generation: number }).generation;
  try {
    t.is(await generation(), 1);
    await build(dir, 2);
    await waitFor(async () => (await generation()) === 2, 30000, 'generation 2').catch(() => undefined);
    t.is(await generation(), 2);
    // A clean build: the build folder goes, and the build writes it again.
    fs.rmSync(path.join(dir, 'build'), { recursive: true });
    await build(dir, 3);
    await waitFor(async () => (await generation()) === 3, 30000, 'generation 3').catch(() => undefined);
    t.is(await generation(), 3, s.logs().filter((l) => /reload|file change/.test(l)).join('\n'));
  } finally {
    stop();
    await c.close();
    await s.stop();
  }
});
