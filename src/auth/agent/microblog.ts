/**
 * microblog adapter: OAuth 1.0a-signed REST calls.
 * - `GET {base}/1.1/account/verify_credentials.json` → the user; its `id_str` must be `player_id`.
 * - `GET {base}/1.1/friends/ids.json?user_id=…&stringify_ids=true&cursor=…` → `{"ids",
 *   "next_cursor_str"}`, followed until the cursor is "0".
 * HTTP 401 means the token (or its secret) is not valid: result 1.
 */
import { oauthHeader } from './oauth1.ts';
import { PlatformError, idText, isObject, platformGet } from './platform-http.ts';
import { OK, failed, type Credentials, type PlatformAdapter } from './platform.ts';
import type { AgentAnswer } from '../types.ts';

export interface MicroblogOptions {
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  timeoutMs: number;
  maxPages: number;
}

export class MicroblogAdapter implements PlatformAdapter {
  readonly name = 'microblog' as const;
  private readonly base: string;

  constructor(private readonly o: MicroblogOptions) {
    this.base = o.baseUrl.replace(/\/+$/, '');
  }

  get configured(): boolean {
    return this.base !== '' && this.o.consumerKey !== '' && this.o.consumerSecret !== '';
  }

  /** A signed GET: each request, a redirect's included, is signed for its own URL with a new nonce. */
  private get(url: string, creds: Credentials) {
    const keys = { consumerKey: this.o.consumerKey, consumerSecret: this.o.consumerSecret, token: creds.token, tokenSecret: creds.secret ?? '' };
    return platformGet('microblog', url, this.o.timeoutMs, (at) => ({ authorization: oauthHeader('GET', at, keys) }));
  }

  async verify(playerId: string, creds: Credentials): Promise<AgentAnswer> {
    const { status, json } = await this.get(`${this.base}/1.1/account/verify_credentials.json`, creds);
    if (status === 401) return failed('access token is not valid');
    if (status !== 200) throw new PlatformError('bad_answer', `microblog verify_credentials answered HTTP ${status}`);
    if (!isObject(json) || typeof json.id_str !== 'string') {
      throw new PlatformError('bad_answer', 'microblog verify_credentials answered without id_str');
    }
    if (json.id_str !== playerId) return failed('access token belongs to another user');
    return OK;
  }

  async friends(playerId: string, creds: Credentials): Promise<AgentAnswer> {
    const friends: string[] = [];
    let cursor = '-1';
    for (let page = 0; cursor !== '0'; page++) {
      if (page >= this.o.maxPages) throw new PlatformError('bad_answer', `microblog friend list has more than ${this.o.maxPages} pages`);
      const url = `${this.base}/1.1/friends/ids.json?user_id=${encodeURIComponent(playerId)}&stringify_ids=true&count=5000&cursor=${encodeURIComponent(cursor)}`;
      const { status, json } = await this.get(url, creds);
      if (status === 401) return failed('access token is not valid');
      if (status !== 200) throw new PlatformError('bad_answer', `microblog friends/ids answered HTTP ${status}`);
      if (!isObject(json) || !Array.isArray(json.ids) || typeof json.next_cursor_str !== 'string') {
        throw new PlatformError('bad_answer', 'microblog friends/ids answered without ids and next_cursor_str');
      }
      for (const raw of json.ids) {
        const id = idText(raw);
        if (id === null) throw new PlatformError('bad_answer', 'microblog friends/ids answered an id that is neither a string nor an exact integer');
        friends.push(id);
      }
      if (json.next_cursor_str === cursor) throw new PlatformError('bad_answer', 'microblog friends/ids repeated its cursor');
      cursor = json.next_cursor_str;
    }
    return { ...OK, friends };
  }
}
