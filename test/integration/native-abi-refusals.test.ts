/**
 * Calls a server refuses, and how (docs/reference/c-abi.md): account calls on a server whose
 * manifest lists no SessionService are refused at once (GSF_ERR_UNAVAILABLE), managed or native,
 * on an event thread or the main thread, none waiting out the event's time limit; a counter
 * name no counter can have is INVALID_ARGUMENT for counter_read as for every counter call; an
 * unknown object type is INVALID_ARGUMENT for object_read_cached from the server's first event.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';

const NATIVE = path.join(fixtures, 'native-plugins', 'abi-refusals');
/** The status a fixture call returned (recorded as 100 + status), or null before it ran. */
const status = (name: string): number | null => {
  const v = native.counterValue('ab', name);
  return v === null ? null : v - 100;
};
const REFUSAL = 'accounts.locate: this server has no SessionService (the manifest lists none), so no account logs in here';

/** A plugin whose onStart (main thread) and event `ma.locate` (an event thread) ask for an account; each writes what it got. */
function managedPlugin(out: string): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-accounts-off-')), 'ma');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'index.ts'), `import fs from 'node:fs';
import { definePlugin } from 'gsf';
const note = (where: string, p: Promise<unknown>) => p.then(
  (value) => fs.appendFileSync(${JSON.stringify(out)}, JSON.stringify({ where, value }) + '\\n'),
  (err) => fs.appendFileSync(${JSON.stringify(out)}, JSON.stringify({ where, code: err.code, message: err.message }) + '\\n'));
export default definePlugin({
  name: 'ma', version: '1.0.0',
  register(api) {
    api.onStart(() => note('main', api.accounts.locate('nobody')));
    api.event('ma.locate', () => note('event', api.accounts.locate('nobody')));
  },
});
`);
  return dir;
}

test.serial('without a SessionService an account call is refused at once, on the main thread, an event thread and from C', async (t) => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-accounts-off-')), 'answers.jsonl');
  // A time limit no test waits out: a call left unanswered would fail the test by it.
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1, event_timeout_in_ms: 60_000 } }, [managedPlugin(out), NATIVE]);
  const answers = (): Array<Record<string, unknown>> => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
  try {
    s.server.invoke('ma.locate');
    s.server.invoke('ab.locate');
    await waitFor(() => answers().length === 2, 10000, 'both managed answers');
    t.deepEqual(answers().sort((a, b) => String(a.where).localeCompare(String(b.where))), [
      { where: 'event', code: 'GSF_ERR_UNAVAILABLE', message: REFUSAL },
      { where: 'main', code: 'GSF_ERR_UNAVAILABLE', message: REFUSAL },
    ]);
    // The native call is taken (OK); its answer is the refusal, which fails the event, and its
    // continuation's user data is released once without the continuation running.
    await waitFor(() => native.counterValue('ab', 'drop') === 1, 10000, "the native call's drop");
    t.is(native.counterValue('ab', 'locate'), 100);
    t.is(native.counterValue('ab', 'then'), null);
    await waitFor(() => s.logs().some((l) => l.includes('ab.locate') && l.includes(REFUSAL)), 10000, 'the failure line');
    t.false(s.logs().some((l) => l.includes('Event timeout')));
  } finally {
    await s.stop();
  }
});

test.serial('counter_read refuses names no counter can have; object_read_cached refuses an unknown type from the first event on', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, ['objects-probe', NATIVE]);
  try {
    // The server's first event: no JavaScript has touched objects on any thread yet.
    s.server.invoke('ab.args');
    await waitFor(() => status('counter_read_missing') !== null, 10000, 'ab.args');
    const INVALID_ARGUMENT = 1, NOT_FOUND = 2;
    t.deepEqual({
      read_cached_unknown_type: status('read_cached_unknown_type'),
      counter_read_dotdot: status('counter_read_dotdot'),
      counter_read_empty: status('counter_read_empty'),
      counter_read_bad_utf8: status('counter_read_bad_utf8'),
      counter_read_null_with_length: status('counter_read_null_with_length'),
      counter_read_missing: status('counter_read_missing'),
    }, {
      read_cached_unknown_type: INVALID_ARGUMENT,
      counter_read_dotdot: INVALID_ARGUMENT,
      counter_read_empty: INVALID_ARGUMENT,
      counter_read_bad_utf8: INVALID_ARGUMENT,
      counter_read_null_with_length: INVALID_ARGUMENT,
      counter_read_missing: NOT_FOUND,
    });
  } finally {
    await s.stop();
  }
});

test.serial('invoke and timer_start refuse a text that is a lost buffer (NULL with a length) or not UTF-8, as bodies are refused', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 1 } }, [NATIVE]);
  try {
    s.server.invoke('ab.texts');
    await waitFor(() => status('timer_name_lost') !== null, 10000, 'ab.texts');
    const OK = 0, INVALID_ARGUMENT = 1;
    t.deepEqual({
      invoke_name_lost: status('invoke_name_lost'),
      invoke_tag_name_lost: status('invoke_tag_name_lost'),
      invoke_tag_name_bad_utf8: status('invoke_tag_name_bad_utf8'),
      invoke_tag_name_empty: status('invoke_tag_name_empty'),
      timer_name_lost: status('timer_name_lost'),
    }, {
      invoke_name_lost: INVALID_ARGUMENT,
      invoke_tag_name_lost: INVALID_ARGUMENT,
      invoke_tag_name_bad_utf8: INVALID_ARGUMENT,
      invoke_tag_name_empty: OK,
      timer_name_lost: INVALID_ARGUMENT,
    });
  } finally {
    await s.stop();
  }
});
