/**
 * socialnet adapter: Graph-API style token inspection and friend list.
 * - `GET {base}/debug_token?input_token=T&access_token={app_id}|{app_secret}` →
 *   `{"data": {"is_valid", "app_id", "user_id"}}`; the token is good when it is valid, was issued
 *   to this app and belongs to `player_id`.
 * - `GET {base}/{user_id}/friends?access_token=T` → `{"data": [{"id"}], "paging": {"next"}}`,
 *   `paging.next` followed until it is absent.
 */
import { PlatformError, idText, isObject, platformGet } from './platform-http.ts';
import { OK, failed, type Credentials, type PlatformAdapter } from './platform.ts';
import type { AgentAnswer } from '../types.ts';

export interface SocialnetOptions {
  baseUrl: string;
  appId: string;
  appSecret: string;
  timeoutMs: number;
  maxPages: number;
}

/** Graph API error code of an invalid or expired user access token. */
const INVALID_TOKEN = 190;

export class SocialnetAdapter implements PlatformAdapter {
  readonly name = 'socialnet' as const;
  private readonly base: string;

  constructor(private readonly o: SocialnetOptions) {
    this.base = o.baseUrl.replace(/\/+$/, '');
  }

  get configured(): boolean {
    return this.base !== '' && this.o.appId !== '' && this.o.appSecret !== '';
  }

  async verify(playerId: string, creds: Credentials): Promise<AgentAnswer> {
    const url = `${this.base}/debug_token?input_token=${encodeURIComponent(creds.token)}` +
      `&access_token=${encodeURIComponent(`${this.o.appId}|${this.o.appSecret}`)}`;
    const { status, json } = await platformGet('socialnet', url, this.o.timeoutMs);
    if (status !== 200) {
      throw new PlatformError('bad_answer', `socialnet /debug_token answered HTTP ${status}${graphError(json)}`);
    }
    const data = isObject(json) ? json.data : undefined;
    if (!isObject(data) || typeof data.is_valid !== 'boolean') {
      throw new PlatformError('bad_answer', 'socialnet /debug_token answered without data.is_valid');
    }
    if (!data.is_valid) return failed('access token is not valid');
    if (data.app_id !== undefined) {
      const appId = idText(data.app_id);
      if (appId === null) throw new PlatformError('bad_answer', 'socialnet /debug_token answered a data.app_id that is not an id');
      if (appId !== this.o.appId) return failed('access token was issued to another app');
    }
    const userId = idText(data.user_id);
    if (userId === null) throw new PlatformError('bad_answer', 'socialnet /debug_token answered without data.user_id (a string, or an exact integer)');
    if (userId !== playerId) return failed('access token belongs to another user');
    return OK;
  }

  async friends(playerId: string, creds: Credentials): Promise<AgentAnswer> {
    const origin = new URL(this.base).origin;
    let url: string | undefined = `${this.base}/${encodeURIComponent(playerId)}/friends?access_token=${encodeURIComponent(creds.token)}`;
    const friends: string[] = [];
    for (let page = 0; url !== undefined; page++) {
      if (page >= this.o.maxPages) throw new PlatformError('bad_answer', `socialnet friend list has more than ${this.o.maxPages} pages`);
      const { status, json } = await platformGet('socialnet', url, this.o.timeoutMs);
      if (status !== 200) {
        if (isObject(json) && isObject(json.error) && json.error.code === INVALID_TOKEN) return failed('access token is not valid');
        throw new PlatformError('bad_answer', `socialnet friends answered HTTP ${status}${graphError(json)}`);
      }
      if (!isObject(json) || !Array.isArray(json.data)) throw new PlatformError('bad_answer', 'socialnet friends answered without a data array');
      for (const f of json.data) {
        const id = isObject(f) ? idText(f.id) : null;
        if (id === null) throw new PlatformError('bad_answer', 'socialnet friends answered an entry without an id (a string, or an exact integer)');
        friends.push(id);
      }
      const next = isObject(json.paging) ? json.paging.next : undefined;
      if (next === undefined || next === null) {
        url = undefined;
      } else if (typeof next !== 'string' || !sameOrigin(next, origin)) {
        // Only ever follow links back to the configured platform: the token travels with them.
        throw new PlatformError('bad_answer', 'socialnet friends answered a paging.next link to another origin');
      } else {
        url = next;
      }
    }
    return { ...OK, friends };
  }
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

function graphError(json: unknown): string {
  if (!isObject(json) || !isObject(json.error)) return '';
  const { code, type } = json.error;
  // Only text and numbers are shown: anything else in a platform's answer is not read further.
  return ` (${[type, code].filter((v) => typeof v === 'string' || typeof v === 'number').map(String).join(' ')})`;
}
