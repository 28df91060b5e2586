import test from 'ava';
import { hmacSha1Signature, oauthHeader, percentEncode, signatureBaseString } from '../../../src/auth/agent/oauth1.ts';

// The worked example of microblog's documentation ("Creating a signature").
const EXAMPLE = {
  url: 'https://api.twitter.com/1.1/statuses/update.json',
  params: [
    ['status', 'Hello Ladies + Gentlemen, a signed OAuth request!'],
    ['include_entities', 'true'],
    ['oauth_consumer_key', 'xvz1evFS4wEEPTGEFPHBog'],
    ['oauth_nonce', 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg'],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ['oauth_timestamp', '1318622958'],
    ['oauth_token', '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb'],
    ['oauth_version', '1.0'],
  ] as Array<[string, string]>,
  consumerSecret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw',
  tokenSecret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE',
};

test('percent-encoding follows RFC 3986', (t) => {
  t.is(percentEncode("Ladies + Gentlemen!*'()~._-"), 'Ladies%20%2B%20Gentlemen%21%2A%27%28%29~._-');
  t.is(percentEncode('☃'), '%E2%98%83');
});

test('the documented example gives the documented base string and signature', (t) => {
  const base = signatureBaseString('post', EXAMPLE.url, EXAMPLE.params);
  t.is(base, 'POST&https%3A%2F%2Fapi.twitter.com%2F1.1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521');
  t.is(hmacSha1Signature(base, EXAMPLE.consumerSecret, EXAMPLE.tokenSecret), 'hCtSmYh+iHYCEqBWrE7C7hYmtUk=');
});

test('oauthHeader signs query parameters and lists the oauth_* fields', (t) => {
  const header = oauthHeader('POST', `${EXAMPLE.url}?include_entities=true`, {
    consumerKey: 'xvz1evFS4wEEPTGEFPHBog', consumerSecret: EXAMPLE.consumerSecret,
    token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb', tokenSecret: EXAMPLE.tokenSecret,
  }, [['status', 'Hello Ladies + Gentlemen, a signed OAuth request!']], 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg', 1318622958);
  t.is(header, 'OAuth oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", '
    + 'oauth_signature_method="HMAC-SHA1", oauth_timestamp="1318622958", oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", '
    + 'oauth_version="1.0", oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D"');
});
