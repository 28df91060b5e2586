/**
 * What repeated plugin reloads and event-thread resizes leave behind on the main thread: after a
 * warm-up, more cycles must not grow file descriptors, threads, held rings and ports, the
 * outbound reader's tables (its ended threads among them), the dispatcher's tables or flag
 * listeners. Every retired thread is let go.
 */
import fs from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import { activeSessions } from '../../src/session/main/feature.ts';
import { waitFor } from './_server.ts';
import { startSessionServer, apiUrl, type SessionServer } from './_session.ts';
import { newPluginDir, post } from './_reload.ts';

const REGISTER = `
    api.flags.define('reloadable_probe_flag', { type: 'int32', default: 3, desc: 'probe' });
    api.timers.every(60000, 'reloadable.tick', null);
    api.event('reloadable.tick', () => undefined);
    api.http.route('GET', '/reloadable/probe', (_req, res) => res.json({ ok: true }));
    api.counters.define('reloadable', 'probe_counter', 'probe', 1);`;

function fdCount(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

function taskCount(): number {
  return fs.readdirSync('/proc/self/task').length;
}

type AnyRec = Record<string, unknown>;

function tables(s: SessionServer): Record<string, number> {
  const reader = activeSessions!.reader as unknown as AnyRec;
  const d = s.server.dispatcher as unknown as AnyRec;
  const flags = s.server.thread.flags as unknown as AnyRec;
  const listeners = [...(flags.listeners as Map<string, unknown[]>).values()].reduce((n, l) => n + l.length, 0);
  return {
    heldRings: activeSessions!.reader.heldRings,
    heldPorts: activeSessions!.reader.heldPorts,
    readerDrains: (reader.drains as Map<number, unknown>).size,
    readerUnbound: (reader.unbound as Map<number, unknown>).size,
    readerEarly: (reader.early as Map<number, unknown>).size,
    readerEnding: activeSessions!.reader.endingThreads,
    tasks: (d.tasks as Map<number, unknown>).size,
    retiring: (d.retiring as Set<unknown>).size,
    waitingChannels: (d.waitingChannels as unknown[]).length,
    endHooks: (d.endHooks as Set<unknown>).size,
    goneListeners: (d.goneListeners as Set<unknown>).size,
    flagListeners: listeners,
    routes: s.server.api.router.list().length,
  };
}

async function settle(s: SessionServer, threads: number): Promise<void> {
  await waitFor(() => activeSessions!.reader.heldRings === threads && activeSessions!.reader.heldPorts === threads
    && s.server.dispatcher.size === threads && (s.server.dispatcher as unknown as { retiring: Set<unknown> }).retiring.size === 0,
  20000, 'the retired threads let go');
}

/**
 * Warms up with one `cycle`, then runs `more`: the main-thread tables must be the same after them,
 * with no thread left ending, and fds and threads must not grow (by more than the noise of a
 * thread or two the runtime starts on its own).
 */
async function assertNoGrowth(t: ExecutionContext, s: SessionServer, cycle: (n: number) => Promise<void>, more: number, unit: string): Promise<void> {
  await cycle(1);
  const fd1 = fdCount(), task1 = taskCount(), t1 = tables(s);
  await cycle(more);
  const fd2 = fdCount(), task2 = taskCount(), t2 = tables(s);
  t.deepEqual(t2, t1, `main-thread tables after ${1 + more} ${unit}s equal those after 1`);
  t.is(t2.readerEnding, 0);
  t.true(fd2 <= fd1 + 2, `fds: ${fd1} after 1 ${unit}, ${fd2} after ${1 + more}`);
  t.true(task2 <= task1 + 1, `threads: ${task1} after 1 ${unit}, ${task2} after ${1 + more}`);
}

async function ping(s: SessionServer): Promise<void> {
  const r = await fetch(`${apiUrl(s)}/reloadable/probe`);
  if (r.status !== 200) throw new Error(`route answered ${r.status}`);
  await r.arrayBuffer();
}

test.serial('forced plugin reloads: fds, threads and main-thread tables do not grow per reload', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', register: REGISTER });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 } }, [dir]);
  const c = await s.connect('json');
  try {
    const cycle = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const r = await post(s, '/v1/plugins/reloadable/reload?force=true');
        if (r.status !== 200) throw new Error(JSON.stringify(r.body));
        await c.request('ping', { n: i });
        await ping(s);
      }
      await settle(s, 1);
    };
    await assertNoGrowth(t, s, cycle, 4, 'reload');
  } finally {
    await c.close();
    await s.stop();
  }
});

test.serial('event-thread resizes: fds, threads and main-thread tables do not grow per resize', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', register: REGISTER });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 1 } }, [dir]);
  const c = await s.connect('json');
  try {
    const cycle = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        for (const size of ['2', '1']) {
          t.deepEqual(s.server.thread.flags.setFromText('event_threads_size', size), { ok: true, value: Number(size) });
          await settle(s, Number(size));
          await c.request('ping', { n: i });
        }
      }
    };
    await assertNoGrowth(t, s, cycle, 3, 'resize cycle');
  } finally {
    await c.close();
    await s.stop();
  }
});
