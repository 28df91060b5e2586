import test from 'ava';
import os from 'node:os';
import { parseManifest } from '../../src/config/manifest.ts';
import { CORES, MAX_EVENT_THREADS } from '../../src/config/schema.ts';
import { buildFlags } from '../../src/config/flag-setup.ts';
import { emptyManifest } from '../../src/config/manifest.ts';

const cores = `${CORES} core${CORES === 1 ? '' : 's'}`;
const start = (component: string, args: Record<string, unknown>): string | null => {
  try {
    parseManifest({ components: [{ name: component, arguments: args }] }, 'MANIFEST.json', '/tmp');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

test('the event thread limit is 4 per core this process may use', (t) => {
  t.is(CORES, os.availableParallelism());
  t.is(MAX_EVENT_THREADS, 4 * CORES);
  // SPEC's default of 4 fits on a single core.
  t.true(MAX_EVENT_THREADS >= 4);
});

test('a manifest over a range stops the start naming file, component, argument and limit', (t) => {
  t.is(start('EventDispatcher', { event_threads_size: MAX_EVENT_THREADS }), null);
  t.is(start('EventDispatcher', { event_threads_size: MAX_EVENT_THREADS + 1 }),
    `MANIFEST.json: EventDispatcher.event_threads_size must be at most ${MAX_EVENT_THREADS} (4 event threads per core, ${cores})`);
  t.is(start('EventDispatcher', { event_threads_size: 0 }), 'MANIFEST.json: EventDispatcher.event_threads_size must be a positive integer');
  t.is(start('Logging', { minloglevel: 3, v: 0 }), null);
  t.is(start('Logging', { minloglevel: 4 }), 'MANIFEST.json: Logging.minloglevel must be at most 3');
  t.is(start('Logging', { minloglevel: -1 }), 'MANIFEST.json: Logging.minloglevel must be an integer from 0 to 3');
  t.is(start('Logging', { v: -1 }), 'MANIFEST.json: Logging.v must be an integer >= 0');
  t.is(start('Logging', { v: 9 }), null);
});

test('flags refuse out-of-range text with the reason, and keep their value', (t) => {
  const flags = buildFlags(emptyManifest().components);
  t.deepEqual(flags.setFromText('event_threads_size', String(MAX_EVENT_THREADS + 1)), {
    ok: false, reason: 'invalid', problem: `must be at most ${MAX_EVENT_THREADS} (4 event threads per core, ${cores})`,
  });
  t.deepEqual(flags.setFromText('minloglevel', '4'), { ok: false, reason: 'invalid', problem: 'must be at most 3' });
  t.deepEqual(flags.setFromText('v', '-2'), { ok: false, reason: 'invalid', problem: 'must be an integer >= 0' });
  t.deepEqual(flags.setFromText('session_message_logging_level', '3'), { ok: false, reason: 'invalid', problem: 'must be at most 2' });
  t.deepEqual(flags.setFromText('v', 'loud'), { ok: false, reason: 'invalid', problem: null });
  t.is(flags.get('event_threads_size'), 4);
  t.is(flags.get('minloglevel'), 0);
  t.throws(() => flags.set('minloglevel', 7), { message: 'flag minloglevel must be at most 3' });
  t.deepEqual(flags.setFromText('minloglevel', '3'), { ok: true, value: 3 });
});
