/**
 * Per-platform authentication keys (SPEC 2.2): the in-process request carries one string, made
 * from what the game client sent by the platform's key function, and the client turns it back
 * into the agent's request body.
 */
import { gsfError } from '../../errors.ts';
import { hasLoneSurrogate } from '../../text.ts';
import { PLATFORM_TYPES, type AuthenticationRequest, type PlatformType } from '../types.ts';

/** Test platform: no credentials. */
export function makeTestAuthenticationKey(): string {
  return '';
}

/** IP platform: the player's address. */
export function makeIpAddressAuthenticationKey(ip: string): string {
  return ip;
}

/** socialnet: the user's access token. */
export function makeSocialnetAuthenticationKey(accessToken: string): string {
  return accessToken;
}

/** microblog: the user's OAuth 1.0a access token and token secret. */
export function makeMicroblogAuthenticationKey(accessToken: string, accessTokenSecret: string): string {
  return `${keyPart('accessToken', accessToken)}&${keyPart('accessTokenSecret', accessTokenSecret)}`;
}

/** One credential of a microblog key, percent-encoded; text with no UTF-8 form has no encoding. */
function keyPart(name: string, value: string): string {
  if (typeof value !== 'string') throw gsfError('GSF_ERR_BAD_ARGUMENT', `makeMicroblogAuthenticationKey: ${name} must be a string`);
  if (hasLoneSurrogate(value)) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `makeMicroblogAuthenticationKey: ${name} holds an unpaired UTF-16 surrogate (text with no UTF-8 form)`);
  }
  return encodeURIComponent(value);
}

/** Builds a request after checking its fields. */
export function authenticationRequest(platformType: PlatformType, userId: string, authenticationKey = ''): AuthenticationRequest {
  const request = { platform_type: platformType, user_id: userId, authentication_key: authenticationKey };
  checkRequest(request);
  return request;
}

/** Throws GSF_ERR_BAD_ARGUMENT unless `r` is a well-formed request. */
export function checkRequest(r: unknown): asserts r is AuthenticationRequest {
  const req = r as Partial<AuthenticationRequest> | null;
  if (typeof req !== 'object' || req === null) throw gsfError('GSF_ERR_BAD_ARGUMENT', 'authentication request must be an object');
  if (!PLATFORM_TYPES.includes(req.platform_type as PlatformType)) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `authentication request: platform_type must be one of ${PLATFORM_TYPES.join(', ')}`);
  }
  if (typeof req.user_id !== 'string') throw gsfError('GSF_ERR_BAD_ARGUMENT', 'authentication request: user_id must be a string');
  if (typeof req.authentication_key !== 'string') {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', 'authentication request: authentication_key must be a string');
  }
}

/** The agent path and body for a request (`kind`: authentication or personal info). */
export function agentCall(kind: 'authentication' | 'personalinfo', r: AuthenticationRequest): { path: string; body: Record<string, string> } {
  const path = `/v1/${kind}/${r.platform_type}`;
  switch (r.platform_type) {
    case 'test':
      return { path, body: { player_id: r.user_id } };
    case 'ipaddress':
      if (kind === 'personalinfo') throw gsfError('GSF_ERR_BAD_ARGUMENT', 'personal info is not available for platform ipaddress');
      return { path, body: { player_id: r.user_id, ip: r.authentication_key } };
    case 'socialnet':
      return { path, body: { player_id: r.user_id, access_token: r.authentication_key } };
    case 'microblog': {
      const amp = r.authentication_key.indexOf('&');
      const token = amp < 0 ? r.authentication_key : r.authentication_key.slice(0, amp);
      const secret = amp < 0 ? '' : r.authentication_key.slice(amp + 1);
      return { path, body: { player_id: r.user_id, access_token: safeDecode(token), access_token_secret: safeDecode(secret) } };
    }
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
