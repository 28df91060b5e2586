/**
 * Settings in milliseconds that a timer waits take at most 2^31 - 1 ms (about 24.8 days): a
 * longer one would make the timer fire at once (or throw), so a manifest with one is refused at
 * start, naming the argument; the limit itself is accepted. Checked on the server's manifest
 * (every `*_in_ms` argument of every built-in component) and the authenticator agent's.
 */
import test from 'ava';
import { parseAgentConfig } from '../../../src/auth/agent/agent-config.ts';
import { parseManifest } from '../../../src/config/manifest.ts';
import { COMPONENTS, MAX_TIMER_MS } from '../../../src/config/schema.ts';

const TOO_LONG = 'must be at most 2147483647 (the longest a timer can wait, about 24.8 days)';

test('every built-in *_in_ms argument refuses 2^31 ms and accepts 2^31 - 1', (t) => {
  const timed = Object.entries(COMPONENTS).flatMap(([name, schema]) =>
    Object.entries(schema).filter(([arg, spec]) => arg.endsWith('_in_ms') && spec.type === 'uint64').map(([arg]) => [name, arg] as const));
  t.true(timed.length >= 10, `${timed.length} arguments`);
  for (const [name, arg] of timed) {
    const manifest = (value: number): unknown => ({ components: [{ name, arguments: { [arg]: value } }] });
    t.throws(() => parseManifest(manifest(2 ** 31), 'M.json', '/tmp'), { message: `M.json: ${name}.${arg} ${TOO_LONG}` });
    t.notThrows(() => parseManifest(manifest(MAX_TIMER_MS), 'M.json', '/tmp'), `${name}.${arg}`);
  }
});

test("the agent's platform request timeouts refuse 2^31 ms and more", (t) => {
  for (const arg of ['socialnet_request_timeout_in_ms', 'microblog_request_timeout_in_ms']) {
    for (const value of [2 ** 31, 3_000_000_000, 5_000_000_000]) {
      t.throws(() => parseAgentConfig({ components: [{ name: 'Authenticator', arguments: { enabled: 1, [arg]: value } }] }, 'a.json', '/tmp'),
        { message: `a.json: Authenticator.${arg} ${TOO_LONG}` });
    }
    const ok = parseAgentConfig({ components: [{ name: 'Authenticator', arguments: { enabled: 1, [arg]: MAX_TIMER_MS } }] }, 'a.json', '/tmp');
    t.is((ok.authenticator as unknown as Record<string, unknown>)[arg], MAX_TIMER_MS);
  }
});
