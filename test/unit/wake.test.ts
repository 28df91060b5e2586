import test from 'ava';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workerExecArgv } from '../../src/events/main/dispatcher.ts';
import { sleepingWorkers, wakeAll, workReady } from '../../src/events/wake.ts';

const sleeper = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'wake', 'sleeper.ts');

interface Woke { slot: number; sleptMs: number }

/** Threads that sleep on the wake cells of `slots`, as idle event workers do. */
async function sleepers(slots: number[]): Promise<{ workers: Worker[]; woke: Woke[]; sleepAll(): Promise<void> }> {
  const woke: Woke[] = [];
  const workers = await Promise.all(slots.map((slot) => new Promise<Worker>((resolve, reject) => {
    const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(sleeper)});`;
    const w = new Worker(code, { eval: true, workerData: { slot }, execArgv: workerExecArgv() });
    w.on('message', (m: Woke | { ready: number }) => ('ready' in m ? resolve(w) : woke.push(m)));
    w.on('error', reject);
  })));
  const sleepAll = async (): Promise<void> => {
    const before = sleepingWorkers();
    for (const w of workers) w.postMessage('sleep');
    while (sleepingWorkers() < before + workers.length) await new Promise((r) => setTimeout(r, 5));
  };
  return { workers, woke, sleepAll };
}

const until = async (check: () => boolean): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
};

test('events made ready wake exactly one sleeping worker, whatever its slot', async (t) => {
  // Slots far apart: a wake-up scans up to the highest slot that ever slept, and no further.
  const { workers, woke, sleepAll } = await sleepers([0, 7, 200]);
  try {
    await sleepAll();
    t.is(sleepingWorkers(), 3);
    for (let round = 1; round <= 3; round++) {
      workReady();
      await until(() => woke.length === round);
      // Only one woke for one readiness: the others still sleep.
      await new Promise((r) => setTimeout(r, 50));
      t.is(woke.length, round);
      t.is(sleepingWorkers(), 3 - round);
    }
    t.deepEqual(woke.map((w) => w.slot).sort((a, b) => a - b), [0, 7, 200]);
    // No one sleeps: events made ready now wake nobody and nothing hangs.
    workReady();
    t.is(sleepingWorkers(), 0);
    // Asleep again, then a new epoch's wakeAll reaches every slot at once.
    await sleepAll();
    wakeAll();
    await until(() => woke.length === 6);
    t.is(woke.length, 6);
    t.true(woke.slice(3).every((w) => w.sleptMs < 10_000), 'woken, not timed out');
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
});
