/**
 * Durability on both backends. A `gsf start` process running the arena example is killed
 * with SIGKILL right after its replies arrived; after a restart every score those replies
 * reported is there. A graceful stop commits every event queued before it. A SQLite file gsf
 * cannot write stops the start.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GsfClient } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { waitFor } from './_server.ts';
import { BACKENDS, startObjectServer, stopPostgres, storeArgs } from './_objects.ts';

test.after.always(stopPostgres);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Running {
  child: ChildProcess;
  wsPort: number;
  exited: Promise<number | null>;
}

async function startGsf(manifest: string): Promise<Running> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const line = await waitFor(() => out.split('\n').find((l) => l.includes('listening api=')) ?? (child.exitCode !== null ? `exited: ${out}` : undefined), 60000, 'gsf start');
  const m = /websocket=127\.0\.0\.1:(\d+)/.exec(line);
  if (!m) throw new Error(`gsf did not start: ${line}`);
  return { child, wsPort: Number(m[1]), exited };
}

const connect = (port: number): Promise<GsfClient> => GsfClient.connect({ url: `ws://127.0.0.1:${port}`, version: '1.0.0', codec: 'json' });

for (const backend of BACKENDS) {
  test.serial(`${backend}: SIGKILL after the replies loses none of the scores they reported`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-kill-'));
    const manifest = path.join(dir, 'MANIFEST.json');
    fs.writeFileSync(manifest, JSON.stringify({
      components: [
        { name: 'ApiService', arguments: { api_service_port: 0 } },
        { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0 } },
        { name: 'EventDispatcher', arguments: { event_threads_size: 2 } },
        { name: 'ObjectStore', arguments: await storeArgs(backend) },
      ],
      plugins: [path.join(root, 'plugins', 'arena')],
    }));
    let gsf = await startGsf(manifest);
    try {
      const ada = await connect(gsf.wsPort);
      const bob = await connect(gsf.wsPort);
      await ada.request('hello', { name: 'ada' });
      await bob.request('hello', { name: 'bob' });
      let last = 0;
      for (let i = 0; i < 27; i++) last = (await ada.request<{ score: number }>('click')).score;
      const bobScores = await Promise.all(Array.from({ length: 5 }, () => bob.request<{ score: number }>('click')));
      t.is(last, 27);
      t.deepEqual(bobScores.map((r) => r.score), [1, 2, 3, 4, 5]);
      // Killed right after the last reply: no stop hook, no drain, no flush.
      gsf.child.kill('SIGKILL');
      await gsf.exited;
      await Promise.all([ada.closed, bob.closed]);

      gsf = await startGsf(manifest);
      const again = await connect(gsf.wsPort);
      await again.request('hello', { name: 'ada' });
      t.deepEqual(await again.request('profile'), { name: 'ada', score: 27, character: { nickname: 'ada', level: 3 }, inventory: { potion: 1 } });
      t.deepEqual(await again.request('top'), { leaders: [{ name: 'ada', score: 27 }, { name: 'bob', score: 5 }], total: 32 });
      t.deepEqual(await again.request('click'), { score: 28, total: 33 });
      await again.close();
      gsf.child.kill('SIGTERM');
      t.is(await gsf.exited, 0);
    } finally {
      gsf.child.kill('SIGKILL');
    }
  });

  test.serial(`${backend}: a graceful stop commits every event queued before it`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-stop-'));
    const store = await storeArgs(backend);
    let s = await startObjectServer(store, {}, undefined, dir);
    let stopped = false;
    try {
      for (let i = 0; i < 300; i++) s.server.invoke('objp.open', { name: `p${i}`, coins: i });
      await s.stop();
      stopped = true;
      t.true(s.logs().every((l) => !l.includes('GSF_ERR')));
      s = await startObjectServer(store, {}, undefined, dir);
      stopped = false;
      native.objCacheClear();
      const coins = await transact(async (tx) => Promise.all(Array.from({ length: 300 },
        async (_, i) => (await tx.fetchBy('ProbeAccount', 'name', `p${i}`))?.get('coins') ?? null)));
      t.deepEqual(coins, Array.from({ length: 300 }, (_, i) => i));
    } finally {
      if (!stopped) await s.stop();
    }
  });
}

/**
 * Makes `file` unwritable for this process: immutable (`chattr +i`, which root obeys too), else,
 * when not root, mode 0444. Returns how, and undoes it in `undo`; null when neither is possible.
 */
function makeReadOnly(file: string): { how: string; undo: () => void } | null {
  try {
    execFileSync('chattr', ['+i', file], { stdio: 'ignore' });
    return { how: 'chattr +i', undo: () => execFileSync('chattr', ['-i', file], { stdio: 'ignore' }) };
  } catch {
    if (process.getuid?.() === 0) return null; // root ignores file modes
    fs.chmodSync(file, 0o444);
    return { how: 'chmod 0444', undo: () => fs.chmodSync(file, 0o644) };
  }
}

test.serial('sqlite: a database file gsf cannot write stops the start with a line naming it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-readonly-'));
  const file = path.join(dir, 'data', 'gsf.sqlite');
  const first = await startObjectServer({}, {}, undefined, dir);
  await first.stop();
  const readOnly = makeReadOnly(file);
  if (readOnly === null) {
    // Root on a file system without the immutable attribute (tmpfs): nothing here can refuse root a write.
    t.log('skipped: running as root where chattr +i is not supported');
    t.pass();
    return;
  }
  try {
    t.log(`made read-only with ${readOnly.how}`);
    const err = await t.throwsAsync(startObjectServer({}, {}, undefined, dir));
    t.is(err.message, `object store: cannot open the sqlite database (${file}): gsf cannot write it (attempt to write a readonly database); give the server's user write access to the file and its folder`);
  } finally {
    readOnly.undo();
  }
  // Writable again, it starts.
  const again = await startObjectServer({}, {}, undefined, dir);
  await again.stop();
});
