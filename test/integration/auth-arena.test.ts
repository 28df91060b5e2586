/**
 * The example game's login (message `hello`, in both games: plugins/arena and the C++
 * plugins/arena-native) goes through the AuthenticationClient: with `use_authenticator` true it
 * asks a real agent process (test platform), and when the agent is gone the login fails with a
 * system error instead of letting the player in.
 */
import test from 'ava';
import { startSessionServer } from './_session.ts';
import { startAgentProcess } from './_auth.ts';
import { GAMES, arenaPluginName, arenaPlugins } from './_arena-games.ts';

for (const game of GAMES) test.serial(`[${game}] arena hello authenticates with the agent; without the agent nobody logs in`, async (t) => {
  const agent = await startAgentProcess({});
  const s = await startSessionServer({
    AuthenticationClient: { use_authenticator: true, remote_authenticator_port: agent.port, authenticator_request_timeout_in_ms: 2000 },
  }, arenaPlugins(game));
  try {
    const ada = await s.connect('json');
    t.deepEqual(await ada.request('hello', { name: 'ada' }), { name: 'ada', room: 'lobby' });
    t.is(await agent.stop(), 0);
    const bob = await s.connect('msgpack');
    const err = await t.throwsAsync(bob.request('hello', { name: 'bob' }));
    t.is(err.message, "the handler of 'hello' failed");
    // The line names the plugin and its message type, not the engine event that ran it. (Whether
    // the stopped agent refuses the connection or drops the kept-alive one is the kernel's timing.)
    // (A native handler's line names the status of the call that failed before its message.)
    const line = s.logs().find((l) => l.includes(`GSF_ERR_HANDLER_FAILED: plugin '${arenaPluginName(game)}' message handler 'hello' failed: `
      + `${game === 'native' ? 'UNAVAILABLE: ' : ''}authenticator at 127.0.0.1:${agent.port} is unreachable (`)
      && /is unreachable \((ECONNREFUSED|UND_ERR_SOCKET)\)/.test(l));
    t.truthy(line, s.logs().filter((l) => l.includes('hello') || l.includes('ERR')).join('\n'));
    t.false(line!.includes('_session.message'));
    await Promise.all([ada.close(), bob.close()]);
  } finally {
    await s.stop();
    await agent.stop();
  }
});
