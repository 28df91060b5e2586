/**
 * OAuth 1.0a request signing with HMAC-SHA1 (RFC 5849), as microblog's REST API expects.
 */
import { createHmac, randomBytes } from 'node:crypto';

export interface OAuthCredentials {
  consumerKey: string;
  consumerSecret: string;
  token: string;
  tokenSecret: string;
}

/** RFC 3986 percent-encoding (encodeURIComponent leaves !*'() alone). */
export function percentEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The signature base string: METHOD&url&sorted-params, each part percent-encoded. */
export function signatureBaseString(method: string, baseUrl: string, params: Array<[string, string]>): string {
  const normalized = params
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return `${method.toUpperCase()}&${percentEncode(baseUrl)}&${percentEncode(normalized)}`;
}

/** HMAC-SHA1 of the base string with key `consumerSecret&tokenSecret`, base64. */
export function hmacSha1Signature(baseString: string, consumerSecret: string, tokenSecret: string): string {
  return createHmac('sha1', `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`).update(baseString).digest('base64');
}

/**
 * The `Authorization: OAuth …` header for `method url` (query parameters in `url` are signed).
 * `nonce` and `timestamp` may be given for reproducible signatures.
 */
export function oauthHeader(method: string, url: string, creds: OAuthCredentials,
  extra: Array<[string, string]> = [], nonce = randomBytes(16).toString('hex'), timestamp = Math.floor(Date.now() / 1000)): string {
  const u = new URL(url);
  const oauth: Array<[string, string]> = [
    ['oauth_consumer_key', creds.consumerKey],
    ['oauth_nonce', nonce],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ['oauth_timestamp', String(timestamp)],
    ['oauth_token', creds.token],
    ['oauth_version', '1.0'],
  ];
  const params: Array<[string, string]> = [...oauth, ...u.searchParams.entries(), ...extra];
  const base = signatureBaseString(method, `${u.protocol}//${u.host}${u.pathname}`, params);
  const signature = hmacSha1Signature(base, creds.consumerSecret, creds.tokenSecret);
  return 'OAuth ' + [...oauth, ['oauth_signature', signature] as [string, string]]
    .map(([k, v]) => `${percentEncode(k)}="${percentEncode(v)}"`).join(', ');
}
