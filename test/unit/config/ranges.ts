import test from 'ava';
import os from 'node:os';
import { parseManifest } from '../../../src/config/manifest.ts';
import { CORES, MAX_EVENT_THREADS } from '../../../src/config/schema.ts';
import { buildFlags } from '../../../src/config/flag-setup.ts';
import { emptyManifest } from '../../../src/config/manifest.ts';

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

test('ports, second timers and sizes that the listeners or timers cannot hold are refused at start', (t) => {
  const cases: Array<[string, Record<string, unknown>, string | null]> = [
    ['ApiService', { api_service_port: 65535 }, null],
    ['ApiService', { api_service_port: 99999 }, 'ApiService.api_service_port must be at most 65535 (the largest TCP port)'],
    ['SessionService', { websocket_port: 65536 }, 'SessionService.websocket_port must be at most 65535 (the largest TCP port)'],
    ['AuthenticationClient', { remote_authenticator_port: 70000 }, 'AuthenticationClient.remote_authenticator_port must be at most 65535 (the largest TCP port)'],
    ['SessionService', { idle_timeout_in_sec: 960 }, null],
    ['SessionService', { idle_timeout_in_sec: 961 }, 'SessionService.idle_timeout_in_sec must be at most 960 (the longest uWebSockets.js allows)'],
    ['SessionService', { max_message_bytes: 256 * 1024 * 1024 }, null],
    ['SessionService', { max_message_bytes: 1073741824 }, 'SessionService.max_message_bytes must be at most 268435456 (256 MiB: uWebSockets.js counts frame sizes in 32 bits)'],
    ['SessionService', { max_backpressure_bytes: 2 ** 31 }, 'SessionService.max_backpressure_bytes must be at most 1073741824 (1 GiB: uWebSockets.js counts buffered bytes in 32 bits)'],
    ['CounterService', { refresh_interval_in_sec: 2147483 }, null],
    ['CounterService', { refresh_interval_in_sec: 2147484 }, 'CounterService.refresh_interval_in_sec must be at most 2147483 (the longest a timer can wait, about 24.8 days)'],
    ['CounterService', { counter_monitoring_interval_in_sec: 2147484 }, 'CounterService.counter_monitoring_interval_in_sec must be at most 2147483 (the longest a timer can wait, about 24.8 days)'],
    ['ObjectStore', { decoded_copies_per_thread: 5000000 }, 'ObjectStore.decoded_copies_per_thread must be at most 4194304 (the largest table an event thread keeps)'],
  ];
  for (const [component, args, problem] of cases) {
    const extra = component === 'CounterService' ? [{ name: 'ApiService' }] : [];
    let message: string | null = null;
    try {
      parseManifest({ components: [...extra, { name: component, arguments: args }] }, 'MANIFEST.json', '/tmp');
    } catch (err) {
      message = (err as Error).message;
    }
    t.is(message, problem === null ? null : `MANIFEST.json: ${problem}`, JSON.stringify(args));
  }
});

test('names of Object.prototype members are no components and no arguments', (t) => {
  for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    t.regex(start(name, {}) ?? '', new RegExp(`^MANIFEST\\.json: unknown component "${name.replace(/_/g, '_')}" \\(known: `), name);
  }
  for (const arg of ['constructor', 'toString', 'valueOf']) {
    t.regex(start('ApiService', { [arg]: 8015 }) ?? '', new RegExp(`^MANIFEST\\.json: ApiService\\.${arg} is not an argument of ApiService \\(known: `), arg);
  }
  // A JSON "__proto__" key is an own property of the parsed object.
  const parsed = JSON.parse('{"components":[{"name":"ApiService","arguments":{"__proto__":{"x":1}}}]}') as Record<string, unknown>;
  t.throws(() => parseManifest(parsed, 'MANIFEST.json', '/tmp'), { message: /^MANIFEST\.json: ApiService\.__proto__ is not an argument of ApiService/ });
});
