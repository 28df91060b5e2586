/**
 * Plugins against an older gsf, from JavaScript: the testing addon makes the plugin host check
 * descriptors (and answer the host table's minor) as a gsf of ABI 1.0 or 1.1 would. A plugin
 * built with this header that targets 1.0 (`GSF_TARGET_ABI_MINOR 0`) loads on a 1.0 host and
 * serves; one built for 1.2 is refused by a 1.1 host with the reason, and the start stops.
 */
import path from 'node:path';
import test from 'ava';
import { native, nativeTesting } from '../../src/native.ts';
import { startServer } from '../../src/index.ts';
import { GsfError } from '../../src/errors.ts';
import { fixtures, waitFor } from './_server.ts';

const testing = nativeTesting();
const targetMinor0 = path.join(fixtures, 'native-plugins', 'target-minor-0');
const lifecycle = path.join(fixtures, 'native-plugins', 'native-lifecycle');
const CURRENT = testing.pluginHostAbiMinor();

const manifest = (plugins: string[]) => ({
  components: [
    { name: 'ApiService', arguments: { api_service_port: 0 } },
    { name: 'EventDispatcher', arguments: { event_threads_size: 1 } },
    { name: 'Logging', arguments: { minloglevel: 2 } },
  ],
  plugins,
});

test.afterEach.always(() => {
  testing.pluginHostAbiMinor();
});

test.serial('a plugin that targets ABI 1.0 loads on a 1.0 host and its event runs', async (t) => {
  t.is(CURRENT, 2);
  t.is(testing.pluginHostAbiMinor(0), 0);
  const server = await startServer({ manifest: manifest([targetMinor0]) });
  try {
    t.true(server.thread.plugins.some((p) => p.name === 'target-minor-0'));
    const before = native.counterReadInt('target_minor_0', 'pings') ?? 0;
    server.invoke('target0.ping', undefined);
    await waitFor(() => native.counterReadInt('target_minor_0', 'pings') === before + 1, 10000, 'the ping');
    t.is(native.counterReadInt('target_minor_0', 'pings'), before + 1);
  } finally {
    await server.stop();
  }
});

test.serial('a plugin built for ABI 1.2 is refused by a 1.1 host: the start stops naming both versions', async (t) => {
  testing.pluginHostAbiMinor(1);
  const err = await t.throwsAsync(startServer({ manifest: manifest([lifecycle]) }));
  t.true(err instanceof GsfError);
  t.regex(err.message, /^plugin 'native-lifecycle' load failed: \/.*\/native-lifecycle\.so: built for plugin ABI 1\.2, newer than this gsf's 1\.1 \(update gsf or build against its header\)$/);
});

test.serial('a minor above this build\'s is refused by the switch itself', (t) => {
  t.throws(() => testing.pluginHostAbiMinor(CURRENT + 1), { instanceOf: RangeError });
  t.is(testing.pluginHostAbiMinor(), CURRENT);
});
