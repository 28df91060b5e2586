/**
 * What a plugin's `register` declared on the main thread is replaced by a reload: timers,
 * flags (a kept flag keeps its value), callable counters, monitors, start/stop hooks, session
 * opened handlers and timeout handlers.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { PLUGIN, get, newPluginDir, post, writePlugin } from './_reload.ts';

const P = PLUGIN;

const V1 = `
    api.flags.define('reload_level', { type: 'int32', default: 1, desc: 'kept across reloads' });
    api.flags.define('reload_old_only', { type: 'bool', default: true, desc: 'removed by the new version' });
    api.flags.define('reload_retyped', { type: 'int32', default: 5, desc: 'a number, then a string' });
    api.event('tick_old', () => { api.counters.increase('${P}', 'ticks_old'); });
    api.timers.every(10, 'tick_old');
    api.counters.registerCallable('${P}', 'which', 'the version that answers', () => 1);
    api.counters.define('${P}', 'watched', 'monitored by the old version', 1000);
    api.counters.monitor('${P}', 'watched', 100);
    api.onStart(() => { api.counters.increase('${P}', 'started_old'); });
    api.onStop(() => { api.counters.increase('${P}', 'stopped_old'); });
    api.onEventTimeout(() => { api.counters.increase('${P}', 'timeouts_old'); });`;

const V2 = `
    api.flags.define('reload_level', { type: 'int32', default: 2, desc: 'kept across reloads (2)' });
    api.flags.define('reload_retyped', { type: 'string', default: 'text', desc: 'now a string' });
    api.flags.define('reload_new', { type: 'double', default: 0.5, desc: 'added by the new version' });
    api.event('tick_new', () => { api.counters.increase('${P}', 'ticks_new'); });
    api.timers.every(10, 'tick_new');
    api.counters.registerCallable('${P}', 'which', 'the version that answers', () => 2);
    api.counters.define('${P}', 'watched_new', 'monitored by the new version', 1000);
    api.counters.monitor('${P}', 'watched_new', 100);
    api.onStart(() => { api.counters.increase('${P}', 'started_new'); });
    api.onStop(() => { api.counters.increase('${P}', 'stopped_new'); });
    api.onEventTimeout(() => { api.counters.increase('${P}', 'timeouts_new'); });
    api.sessions.onOpen(() => { api.counters.increase('${P}', 'opened_new'); });
    api.sessions.onMessage('level', (_b, msg) => msg.reply(api.flags.get('reload_level')));
    api.sessions.onMessage('stall', (_b, msg) => { const end = Date.now() + 6000; while (Date.now() < end) { /* past the timeout */ } msg.reply('late'); });`;

test('timers, flags, callable counters, monitors, hooks and handlers of the old version are replaced by the new one\'s', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', register: V1 });
  const s = await startSessionServer({
    RuntimeConfiguration: { additional_configurations: ['reload_level', 'reload_retyped'] },
    CounterService: { counter_monitoring_interval_in_sec: 1 },
    // Far beyond the other handlers here on a loaded machine, well short of the stall.
    EventDispatcher: { event_timeout_in_ms: 2000 },
  }, [dir]);
  const api = `http://127.0.0.1:${s.server.api.port}`;
  const counter = async (name: string): Promise<unknown> => (await get(s, `/v1/counters/${P}/${name}/`)).body.value;
  try {
    await waitFor(() => (native.counterReadInt(P, 'ticks_old') ?? 0) >= 3, 10000, 'old ticks');
    t.is(native.counterReadInt(P, 'started_old'), 1);
    t.is(await counter('which'), 1);
    t.is((await fetch(`${api}/v1/configurations/reload_level/9`, { method: 'PUT' })).status, 200);
    await waitFor(() => s.logs().some((l) => l.includes(`The 'watched of ${P}' counter exceeded threshold`)), 5000, 'the old monitor');

    writePlugin(dir, { version: '2.0.0', register: V2 });
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    const logCut = s.logs().length;
    const ticksOld = native.counterReadInt(P, 'ticks_old');
    // Hooks: the old version's stop hook ran, then the new one's start hook.
    t.is(native.counterReadInt(P, 'stopped_old'), 1);
    t.is(native.counterReadInt(P, 'started_old'), 1);
    t.is(native.counterReadInt(P, 'started_new'), 1);
    // Timers: the new one fires, the old one's handler is gone with its timer.
    await waitFor(() => (native.counterReadInt(P, 'ticks_new') ?? 0) >= 5, 10000, 'new ticks');
    t.is(native.counterReadInt(P, 'ticks_old'), ticksOld);
    // Flags: same name and type keeps the value set at run time, everywhere; a new type starts
    // from its default; a flag the new version does not define is gone.
    const c = await s.connect('json');
    t.is(await c.request('level', {}), 9);
    const level = await get(s, '/v1/configurations/reload_level');
    t.deepEqual(level.body, { reload_level: { type: 'int32', desc: 'kept across reloads (2)', value: '9' } });
    const retyped = await get(s, '/v1/configurations/reload_retyped');
    t.deepEqual(retyped.body, { reload_retyped: { type: 'string', desc: 'now a string', value: 'text' } });
    t.false(s.server.thread.flags.has('reload_old_only'));
    t.is(s.server.thread.flags.get('reload_new'), 0.5);
    // The callable counter answers from the new code.
    t.is(await counter('which'), 2);
    // Sessions: the new opened handler runs for a new session.
    await waitFor(() => native.counterReadInt(P, 'opened_new') === 1, 5000, 'the opened handler');
    // Monitors: two passes warn about the new counter; no pass after the reload warned about the old one.
    await waitFor(() => s.logs().slice(logCut).filter((l) => l.includes(`The 'watched_new of ${P}'`)).length >= 2, 10000, 'the new monitor');
    t.false(s.logs().slice(logCut).some((l) => l.includes(`The 'watched of ${P}'`)));
    // Timeout handlers: the new one runs, the old one is gone.
    const late = c.request('stall', {}).catch((e: unknown) => e);
    await waitFor(() => native.counterReadInt(P, 'timeouts_new') === 1, 10000, 'the timeout handler');
    t.is(native.counterReadInt(P, 'timeouts_old'), null);
    await late;
    await c.close().catch(() => undefined);
  } finally {
    await s.stop();
  }
  // Server stop runs the stop hooks in force now: the new version's.
  t.is(native.counterReadInt(P, 'stopped_new'), 1);
  t.is(native.counterReadInt(P, 'stopped_old'), 1);
});
