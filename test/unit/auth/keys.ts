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

test('a microblog key of text with no UTF-8 form, or of a non-string, is GSF_ERR_BAD_ARGUMENT', (t) => {
  t.throws(() => makeMicroblogAuthenticationKey('tok\ud800', 'secret'), {
    code: 'GSF_ERR_BAD_ARGUMENT', message: 'makeMicroblogAuthenticationKey: accessToken holds an unpaired UTF-16 surrogate (text with no UTF-8 form)',
  } as never);
  t.throws(() => makeMicroblogAuthenticationKey('tok', '\udc00'), { message: /accessTokenSecret holds an unpaired/ });
  t.throws(() => makeMicroblogAuthenticationKey('tok', 5 as never), { message: 'makeMicroblogAuthenticationKey: accessTokenSecret must be a string' });
  // A pair is text like any other.
  t.is(makeMicroblogAuthenticationKey('t😀', 's'), 't%F0%9F%98%80&s');
});
