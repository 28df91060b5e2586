import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadManifest, parseManifest } from '../../../src/config/manifest.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-manifest-'));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

function messageOf(json: unknown): string {
  const err = (() => {
    try {
      parseManifest(json, 'MANIFEST.json', dir);
    } catch (e) {
      return e as TypeError & { code: string };
    }
    throw new Error('no error');
  })();
  if (!(err instanceof TypeError) || err.code !== 'GSF_ERR_MANIFEST') throw new Error(`unexpected ${String(err)}`);
  return err.message;
}

const one = (name: string, args: unknown): unknown => ({ components: [{ name, arguments: args }] });

test('an empty manifest runs with every default', (t) => {
  const m = parseManifest({ components: [] }, 'MANIFEST.json', dir);
  t.is(m.components.EventDispatcher!.event_threads_size, 4);
  t.is(m.components.EventDispatcher!.slow_event_log_threshold_in_ms, 300);
  t.is(m.components.EventDispatcher!.event_timeout_in_ms, 30000);
  t.is(m.components.EventDispatcher!.enable_event_profiler, true);
  t.is(m.components.EventDispatcher!.enable_inheriting_event_tag, true);
  t.is(m.components.EventDispatcher!.enable_random_event_tag, true);
  t.is(m.components.EventDispatcher!.enable_event_thread_checker, true);
  t.is(m.components.EventDispatcher!.enable_outstanding_event_profiler, true);
  t.is(m.components.CounterService!.counter_monitoring_interval_in_sec, 30);
  t.is(m.components.CounterService!.warning_threshold_event_queue_length, 3000);
  t.is(m.components.ApiService!.api_service_address, '127.0.0.1');
  t.deepEqual(m.plugins, null);
  t.deepEqual(parseManifest({}, 'MANIFEST.json', dir).components, m.components);
});

test('listed arguments replace defaults', (t) => {
  const m = parseManifest(one('EventDispatcher', { event_threads_size: 2, enable_event_profiler: false }), 'M', dir);
  t.is(m.components.EventDispatcher!.event_threads_size, 2);
  t.is(m.components.EventDispatcher!.enable_event_profiler, false);
  t.true(m.listed.has('EventDispatcher'));
});

test('bad manifests name the file, the component and the argument', (t) => {
  t.is(messageOf(one('EventDispatcher', { event_threads_size: 0 })),
    'MANIFEST.json: EventDispatcher.event_threads_size must be a positive integer');
  t.is(messageOf(one('EventDispatcher', { event_threads_size: '4' })),
    'MANIFEST.json: EventDispatcher.event_threads_size must be a positive integer');
  t.is(messageOf(one('EventDispatcher', { event_timeout_in_ms: 1.5 })),
    'MANIFEST.json: EventDispatcher.event_timeout_in_ms must be a positive integer');
  t.is(messageOf(one('EventDispatcher', { slow_event_log_threshold_in_ms: -1 })),
    'MANIFEST.json: EventDispatcher.slow_event_log_threshold_in_ms must be a non-negative integer');
  // Integers past 2^53 - 1 are refused for their size, not as negative or fractional.
  t.is(messageOf(one('ObjectStore', { cache_size_in_bytes: 2 ** 64 })),
    'MANIFEST.json: ObjectStore.cache_size_in_bytes must be at most 9007199254740991 (2^53 - 1: larger integers are not exact)');
  t.is(messageOf(one('EventDispatcher', { enable_event_profiler: 1 })),
    'MANIFEST.json: EventDispatcher.enable_event_profiler must be a boolean (true or false)');
  t.is(messageOf(one('AppInfo', { client_compatible_versions: ['1', 2] })),
    'MANIFEST.json: AppInfo.client_compatible_versions must be an array of strings');
  t.is(messageOf(one('ApiService', { api_service_address: 7 })),
    'MANIFEST.json: ApiService.api_service_address must be a string');
  // A token of white space would answer every request 401; empty turns authentication off.
  t.is(messageOf(one('ApiService', { api_service_token: ' \t ' })),
    'MANIFEST.json: ApiService.api_service_token must not be white space only: no request could present it, so every one would get 401 '
    + '(leave it empty to turn authentication off)');
  t.is(messageOf(one('ApiService', { api_service_token: 's3cret\n' })),
    'MANIFEST.json: ApiService.api_service_token must not start or end with white space: HTTP drops it from the Authorization header, '
    + 'so no request would match');
  // A header carries printable ASCII as typed: a token beyond it could never be presented.
  t.is(messageOf(one('ApiService', { api_service_token: 'pässwort-€' })),
    'MANIFEST.json: ApiService.api_service_token must hold printable ASCII characters only (it holds U+00E4): '
    + 'an Authorization header cannot carry others as typed, so no request could present it');
  t.is(messageOf(one('ApiService', { api_service_token: 'a\tb' })),
    'MANIFEST.json: ApiService.api_service_token must hold printable ASCII characters only (it holds U+0009): '
    + 'an Authorization header cannot carry others as typed, so no request could present it');
  t.is(parseManifest(one('ApiService', { api_service_token: 'A-z_0.9~+/= !' }), 'MANIFEST.json', dir).components.ApiService?.api_service_token,
    'A-z_0.9~+/= !');
  t.is(messageOf(one('Logging', { log_format: 'xml' })),
    'MANIFEST.json: Logging.log_format must be one of "text", "json"');
  t.is(messageOf(one('Logging', { v: 2 ** 40 })), 'MANIFEST.json: Logging.v must be a 32-bit integer');
  // Past 2^53 too: the reason is the range, not the minimum the value is above.
  t.is(messageOf(one('Logging', { v: 1e20 })), 'MANIFEST.json: Logging.v must be a 32-bit integer');
  t.is(messageOf(one('Logging', { v: -1e20 })), 'MANIFEST.json: Logging.v must be a 32-bit integer');
  t.is(messageOf(one('EventDispatcher', { event_thread_size: 4 })),
    'MANIFEST.json: EventDispatcher.event_thread_size is not an argument of EventDispatcher (known: event_threads_size, ' +
    'enable_event_profiler, slow_event_log_threshold_in_ms, event_timeout_in_ms, enable_inheriting_event_tag, ' +
    'enable_random_event_tag, enable_event_thread_checker, enable_outstanding_event_profiler, ' +
    'event_thread_hang_threshold_in_ms, event_thread_hang_report_interval_in_ms, event_batch_size, ' +
    'event_task_budget_in_ms, max_awaiting_events_per_thread, shutdown_drain_timeout_in_ms, plugin_reload_timeout_in_ms, ' +
    'event_thread_young_generation_in_mb)');
  t.is(messageOf(one('EventDispatcher', { event_thread_young_generation_in_mb: 4096 })),
    "MANIFEST.json: EventDispatcher.event_thread_young_generation_in_mb must be at most 2048 (V8's young generation)");
  t.regex(messageOf(one('EventDispatch', {})), /^MANIFEST\.json: unknown component "EventDispatch" \(known: AppInfo, EventDispatcher, /);
  t.is(messageOf({ components: [{ name: 'AppInfo' }, { name: 'AppInfo' }] }), 'MANIFEST.json: component AppInfo is listed twice');
  t.is(messageOf({ components: {} }), 'MANIFEST.json: "components" must be an array');
  t.is(messageOf({ components: [{ arguments: {} }] }), 'MANIFEST.json: components[0] must be an object with a string "name"');
  t.is(messageOf({ components: [{ name: 'AppInfo', args: {} }] }), 'MANIFEST.json: AppInfo: unknown key "args" (allowed: name, arguments)');
  t.is(messageOf(one('AppInfo', [])), 'MANIFEST.json: AppInfo.arguments must be an object');
  t.is(messageOf({ component: [] }), 'MANIFEST.json: unknown top-level key "component" (allowed: components, plugins)');
  t.is(messageOf({ plugins: 'example' }), 'MANIFEST.json: "plugins" must be an array of plugin names or paths');
  t.is(messageOf([]), 'MANIFEST.json: must be a JSON object with "components"');
});

test('files: unreadable and invalid JSON', (t) => {
  const missing = path.join(dir, 'nope.json');
  t.throws(() => loadManifest(missing), { instanceOf: TypeError, message: `${missing}: cannot be read (ENOENT)` });
  const bad = write('bad.json', '{"components": [');
  t.throws(() => loadManifest(bad), { instanceOf: TypeError, message: new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: is not valid JSON \\(`) });
  const good = write('good.json', JSON.stringify(one('EventDispatcher', { event_threads_size: 3 })));
  t.is(loadManifest(good).components.EventDispatcher!.event_threads_size, 3);
  // A byte order mark, as editors on Windows save one, is no error.
  const marked = write('bom.json', `\ufeff${JSON.stringify(one('EventDispatcher', { event_threads_size: 4 }))}`);
  t.is(loadManifest(marked).components.EventDispatcher!.event_threads_size, 4);
  // The parser quotes the text near its error, line feeds included: the message stays one line.
  const todo = write('todo.json', 'TODO\n');
  const err = t.throws(() => loadManifest(todo), { instanceOf: TypeError });
  t.is(err!.message, `${todo}: is not valid JSON (Unexpected token 'T', "TODO\\n" is not valid JSON)`);
});

test('an address to listen on or reach is refused empty or with white space (uWS reads an empty one as every interface)', (t) => {
  const why = 'must be a host name or an IP address without white space (0.0.0.0 for every interface)';
  t.is(messageOf(one('ApiService', { api_service_address: '' })), `MANIFEST.json: ApiService.api_service_address ${why}`);
  t.is(messageOf(one('SessionService', { websocket_address: ' 0.0.0.0' })), `MANIFEST.json: SessionService.websocket_address ${why}`);
  t.is(messageOf(one('AuthenticationClient', { remote_authenticator_ip_address: '' })),
    `MANIFEST.json: AuthenticationClient.remote_authenticator_ip_address ${why}`);
  t.is(parseManifest(one('ApiService', { api_service_address: '0.0.0.0' }), 'MANIFEST.json', dir).components.ApiService!.api_service_address, '0.0.0.0');
});
