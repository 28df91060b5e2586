/**
 * A native plugin's descriptor name is at most 255 bytes (event payloads carry it as a msgpack
 * str8): a longer one is refused at load, naming the limit; one at the limit runs like any
 * other, here a one-shot timer (timer_start) its message handler starts. The library is the
 * native-reload fixture with a ping that starts the timer, built with the fixture's CMake
 * command and a long RELOAD_NAME.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { buildNativeReloadable, nativeReloadableCopy } from './_reload.ts';

const LONG_NAME = `long-${'n'.repeat(295)}`;

/** The fixture's source where native.ping also starts a one-shot timer counting longname/timer_runs. */
function timerSource(dir: string): void {
  const file = path.join(dir, 'reload_native.c');
  const source = fs.readFileSync(file, 'utf8');
  const tick = `static gsf_type_status tick(gsf_type_call call, const gsf_type_event_info* event, void* user_data) {
  (void)call, (void)event, (void)user_data;
  return host->counter_increase(gsf_str("longname"), gsf_str("timer_runs"), 1, NULL);
}

static gsf_type_status on_ping(`;
  let replaced = source.replace('static gsf_type_status on_ping(', tick);
  replaced = replaced.replace('  gsf_mp_writer_init(&reply);',
    '  if ((status = host->timer_start(call, 0, 0, gsf_str("longname.tick"), tick, NULL, NULL, NULL)) != GSF_STATUS_OK) return status;\n  gsf_mp_writer_init(&reply);');
  if (replaced === source) throw new Error('the fixture changed');
  fs.writeFileSync(file, replaced);
}

test('a native plugin whose name is over 255 bytes is refused at load, naming the limit; one of 255 bytes runs its timers', async (t) => {
  const { dir } = nativeReloadableCopy();
  const { dir: atLimit } = nativeReloadableCopy();
  try {
    timerSource(dir);
    buildNativeReloadable(dir, 1, LONG_NAME);
    const err = await t.throwsAsync(startSessionServer({}, [dir]));
    t.regex(err!.message, /descriptor name is 300 bytes long \(at most 255\)/);
    // At the limit, a timer's event carries the name and runs.
    timerSource(atLimit);
    buildNativeReloadable(atLimit, 1, LONG_NAME.slice(0, 255));
    const s = await startSessionServer({}, [atLimit]);
    const c = await s.connect('msgpack');
    try {
      t.deepEqual(await c.request('native.ping', {}), { generation: 1, calls: 1 });
      await waitFor(() => native.counterValue('longname', 'timer_runs') === 1 || undefined, 10000, 'the timer to run');
      t.is(native.counterValue('longname', 'timer_runs'), 1);
    } finally {
      await c.close();
      await s.stop();
    }
  } finally {
    for (const d of [dir, atLimit]) fs.rmSync(path.dirname(d), { recursive: true, force: true });
  }
});
