/**
 * A timer started by an event that runs again after an object conflict. docs/guides/objects.md
 * ("Effects wait for the commit"): "a rerun drops what the conflicting run held, so a client
 * never sees a success whose data was lost and a rerun never answers twice"; the events it
 * invoked are held and dropped with the conflicting run. A timer is an event invoked later, but
 * `api.timers.after` goes straight to the native timer store (src/events/runtime.ts addTimer),
 * so the conflicting run's timer fires as well as the committed run's: the handler runs twice.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transact } from '../../src/objects/plugin-api.ts';
import { waitFor } from './_server.ts';
import { idle, OBJECTS_PROBE, readNotes, startObjectServer, storeArgs } from './_objects.ts';

interface Note { label: string; run: number }

/** Like test/fixtures/plugins/objects-rerun-probe, with a timer where that one invokes a child. */
function rerunTimerPlugin(): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-edges-')), 'edges-rerun');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'index.ts'), `import fs from 'node:fs';
import { definePlugin } from 'gsf';

const runs = new Map<string, number>();

export default definePlugin({
  name: 'edges-rerun',
  version: '0.0.1',
  register(api) {
    api.event<{ id: string; file: string }>('edges.parent', async (p) => {
      const run = (runs.get(p.id) ?? 0) + 1;
      runs.set(p.id, run);
      fs.appendFileSync(p.file, JSON.stringify({ label: 'parent', run }) + '\\n');
      // A reward handed out shortly after the purchase commits.
      api.timers.after(1, 'edges.reward', { file: p.file, run });
      const account = await api.objects.fetch('ProbeAccount', p.id, 'write');
      if (run === 1) {
        // The first run's object changes meanwhile: its commit conflicts and it runs again.
        await api.objects.transact(async (tx) => {
          const same = await tx.fetch('ProbeAccount', p.id, 'write');
          same!.set('coins', same!.get('coins') + 100);
        });
      }
      account!.set('coins', account!.get('coins') + 1);
    });
    api.event<{ file: string; run: number }>('edges.reward', (p) => {
      fs.appendFileSync(p.file, JSON.stringify({ label: 'reward', run: p.run }) + '\\n');
    });
  },
});
`);
  return dir;
}

test.serial('sqlite: a timer started by an event that conflicted and ran again fires once, for the committed run', async (t) => {
  const s = await startObjectServer(await storeArgs('sqlite'), {}, [OBJECTS_PROBE, rerunTimerPlugin()]);
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'rerun-timer', coins: 0 }).id);
    const file = path.join(s.dir, 'rerun.jsonl');
    s.server.invoke('edges.parent', { id, file });
    await waitFor(() => readNotes<Note>(file).filter((n) => n.label === 'parent').length === 2, 20000, 'the rerun');
    await waitFor(() => readNotes<Note>(file).some((n) => n.label === 'reward' && n.run === 2), 20000, 'the committed run\'s reward');
    await idle();
    t.is((await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins'), 101);
    t.deepEqual(readNotes<Note>(file).filter((n) => n.label === 'reward').map((n) => n.run), [2]);
  } finally {
    await s.stop();
  }
});
