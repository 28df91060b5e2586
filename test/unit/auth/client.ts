import test from 'ava';
import { AuthenticationClient } from '../../../src/auth/client/client.ts';
import { authenticationRequest } from '../../../src/auth/client/keys.ts';
import { holdPort } from '../../integration/_ports.ts';

test('an unreachable agent is GSF_ERR_AUTH_UNREACHABLE in the promise and the sync form', async (t) => {
  const held = await holdPort();
  const { port } = held;
  const c = new AuthenticationClient({ useAuthenticator: true, address: '127.0.0.1', port, timeoutMs: 2000 });
  const req = authenticationRequest('test', 'p');
  await t.throwsAsync(c.call('authentication', req), { code: 'GSF_ERR_AUTH_UNREACHABLE', message: `authenticator at 127.0.0.1:${port} is unreachable (ECONNREFUSED)` } as never);
  t.throws(() => c.callSync('personalinfo', req), { code: 'GSF_ERR_AUTH_UNREACHABLE', message: `authenticator at 127.0.0.1:${port} is unreachable (ECONNREFUSED)` } as never);
  await c.close();
  held.release();
});

test('without the agent every request succeeds, and IPv6 agent addresses are bracketed', async (t) => {
  const c = new AuthenticationClient({ useAuthenticator: false, address: '::1', port: 1, timeoutMs: 10 });
  t.is(c.agent, '[::1]:1');
  t.deepEqual(await c.call('personalinfo', authenticationRequest('socialnet', '1', 'x')), { success: true, reason_code: 0, reason_description: '', friends: [] });
  t.deepEqual(c.callSync('authentication', authenticationRequest('socialnet', '1', 'x')), { success: true, reason_code: 0, reason_description: '' });
});
