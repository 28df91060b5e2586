/**
 * An event that runs again after an object conflict names its children as its first run did:
 * SPEC 6.3's `{parent}_#{n}` counts the children of the run that committed, so the first
 * child of the rerun is `{parent}_#1`. Only the committed run's child is queued.
 */
import test from 'ava';
import path from 'node:path';
import { transact } from '../../src/objects/plugin-api.ts';
import { fixtures, waitFor } from './_server.ts';
import { counter, idle, OBJECTS_PROBE, readNotes, startObjectServer, storeArgs } from './_objects.ts';
import type { RerunNote } from '../fixtures/plugins/objects-rerun-probe/index.ts';

const RERUN_PROBE = path.join(fixtures, 'plugins', 'objects-rerun-probe');

test.serial('sqlite: the child invoked by the run that committed after a conflict is named {parent}_#1', async (t) => {
  const s = await startObjectServer(await storeArgs('sqlite'), {}, [OBJECTS_PROBE, RERUN_PROBE]);
  try {
    const id = await transact((tx) => tx.create('ProbeAccount', { name: 'rerun-names', coins: 0 }).id);
    const reruns = counter('object', 'event_reruns');
    const file = path.join(s.dir, 'rerun.jsonl');
    s.server.invoke('objr.parent', { id, file });
    await waitFor(() => readNotes<RerunNote>(file).some((n) => n.label === 'child'), 20000, 'the child to run');
    await idle();
    t.is(counter('object', 'event_reruns') - reruns, 1);
    t.is((await transact((tx) => tx.fetch('ProbeAccount', id)))!.get('coins'), 101);
    const notes = readNotes<RerunNote>(file);
    t.deepEqual(notes.filter((n) => n.label === 'parent').map((n) => [n.name, n.run]), [['objr.parent', 1], ['objr.parent', 2]]);
    // Only the second run's child was queued, and it is the first child of its run.
    t.deepEqual(notes.filter((n) => n.label === 'child').map((n) => [n.name, n.run]), [['objr.parent_#1', 2]]);
  } finally {
    await s.stop();
  }
});
