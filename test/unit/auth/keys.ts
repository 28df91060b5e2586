import test from 'ava';
import {
  agentCall, authenticationRequest, makeIpAddressAuthenticationKey, makeMicroblogAuthenticationKey,
  makeSocialnetAuthenticationKey, makeTestAuthenticationKey,
} from '../../../src/auth/client/keys.ts';

test('each platform key turns back into the agent body of its endpoint', (t) => {
  t.deepEqual(agentCall('authentication', authenticationRequest('test', 'p', makeTestAuthenticationKey())),
    { path: '/v1/authentication/test', body: { player_id: 'p' } });
  t.deepEqual(agentCall('authentication', authenticationRequest('ipaddress', 'p', makeIpAddressAuthenticationKey('::1'))),
    { path: '/v1/authentication/ipaddress', body: { player_id: 'p', ip: '::1' } });
  t.deepEqual(agentCall('personalinfo', authenticationRequest('socialnet', '1', makeSocialnetAuthenticationKey('EAAB&x'))),
    { path: '/v1/personalinfo/socialnet', body: { player_id: '1', access_token: 'EAAB&x' } });
  t.deepEqual(agentCall('authentication', authenticationRequest('microblog', '2', makeMicroblogAuthenticationKey('12-ab&c', 's%e&cret'))),
    { path: '/v1/authentication/microblog', body: { player_id: '2', access_token: '12-ab&c', access_token_secret: 's%e&cret' } });
});

test('bad requests are GSF_ERR_BAD_ARGUMENT', (t) => {
  t.throws(() => authenticationRequest('facebook' as never, 'p'), {
    code: 'GSF_ERR_BAD_ARGUMENT', message: 'authentication request: platform_type must be one of test, ipaddress, socialnet, microblog',
  } as never);
  t.throws(() => authenticationRequest('test', 5 as never), { message: 'authentication request: user_id must be a string' });
  t.throws(() => agentCall('personalinfo', authenticationRequest('ipaddress', 'p', '1.2.3.4')),
    { message: 'personal info is not available for platform ipaddress' });
});
