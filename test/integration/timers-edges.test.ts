/**
 * Timers at the edges of a plugin's life: started once a stop began (they would never fire),
 * and declared by one plugin on an event another plugin's reload removes.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { PLUGIN as P, newPluginDir, post } from './_reload.ts';

const read = (name: string): number => native.counterReadInt(P, name) ?? 0;
const notStarted = (): number => native.counterReadInt('engine', 'timers_not_started_at_stop') ?? 0;

test.serial('a timer started once the stop began (an onStop hook, an event of the drain) is not started: 0 or no timer, a line and a counter', async (t) => {
  const dir = newPluginDir({
    version: '1.0.0', register: `
    api.event('save', () => {
      api.counters.increase('${P}', 'saved');
      api.counters.update('${P}', 'drain_timer_id', api.timers.after(0, 'save'));
    });
    api.onStop(() => {
      api.counters.update('${P}', 'stop_timer_id', api.timers.after(0, 'save'));
      api.invoke('save'); // a last save: it runs in the drain
    });`,
  });
  const before = notStarted();
  const s = await startSessionServer({ EventDispatcher: { shutdown_drain_timeout_in_ms: 5000 } }, [dir]);
  await s.stop();
  // The hook's timer is refused at once (0: no timer); the drain's event holds its timer until
  // its run ends, and then it is not started either: the save ran once, by the invoke.
  t.deepEqual({ saved: read('saved'), hook: read('stop_timer_id') }, { saved: 1, hook: 0 });
  t.true(read('drain_timer_id') > 0);
  t.is(notStarted() - before, 2);
  t.true(s.logs().some((l) => l.includes('stopping: 2 timer(s) started after the stop began (by onStop hooks or events of the drain) were not started')),
    s.logs().filter((l) => /timer/.test(l)).join('\n'));
});

/** A plugin folder `name` whose register runs `body`. */
function plainPlugin(name: string, version: string, body: string, dir?: string): string {
  const d = dir ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-timers-edges-')), name);
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, 'index.ts'), `import { definePlugin } from 'gsf';
export default definePlugin({ name: '${name}', version: '${version}', register(api) {
${body}
} });
`);
  return d;
}

test.serial('a reload that removes an event another plugin\'s declared timer fires is refused, as the start would be', async (t) => {
  const owner = plainPlugin('owner', '1.0.0', `  api.event('owner.tick', () => { api.counters.increase('owner', 'ticks'); });`);
  const user = plainPlugin('user', '1.0.0', `  api.timers.every(10, 'owner.tick');`);
  const s = await startSessionServer({}, [owner, user]);
  try {
    await waitFor(() => (native.counterReadInt('owner', 'ticks') ?? 0) >= 2, 10000, 'ticks');
    plainPlugin('owner', '2.0.0', `  api.event('owner.other', () => undefined);`, owner);
    const r = await post(s, '/v1/plugins/reload');
    t.is(r.status, 422, JSON.stringify(r.body));
    t.like(r.body, { error: 'GSF_ERR_RELOAD_FAILED', stage: 'register', plugins: ['owner'] });
    t.regex(String(r.body.message), /timer event 'owner\.tick': plugin 'user' declares a timer of it, and the new version no longer registers an event named 'owner\.tick'$/);
    // The old version keeps serving: its timer still fires its event.
    const ticks = native.counterReadInt('owner', 'ticks') ?? 0;
    await waitFor(() => (native.counterReadInt('owner', 'ticks') ?? 0) > ticks, 10000, 'ticks after the refusal');
    t.is(native.counterValue('engine', 'events_unknown') ?? 0, 0);
  } finally {
    await s.stop();
  }
});
