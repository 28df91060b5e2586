/**
 * The agent's endpoints (SPEC 4.1): request validation, the test and IP platforms, and the
 * social platforms behind the verdict cache, shared in-flight checks and the request bound.
 * Access tokens are never logged: lines carry `token=sha256:<12 hex>` instead.
 */
import { hash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { isIP } from 'node:net';
import type { Logger } from '../../log/logger.ts';
import { BusyError, InFlight, Limiter, TtlCache, tokenHash } from './cache.ts';
import { PlatformError } from './platform-http.ts';
import { OK, type Credentials, type PlatformAdapter } from './platform.ts';
import { AuthResult, type AgentAnswer, type SocialPlatform } from '../types.ts';
import { hasLoneSurrogate } from '../../text.ts';

export interface ServiceOptions {
  adapters: Record<SocialPlatform, PlatformAdapter>;
  cacheTtlMs: number;
  cacheMaxEntries: number;
  maxConcurrent: number;
  maxWaiting: number;
  log: Logger;
}

type Body = Record<string, unknown>;
type Handler = (body: Body) => AgentAnswer | Promise<AgentAnswer>;

interface Endpoint {
  fields: readonly string[];
  handle: Handler;
}

const TEST_FRIENDS: AgentAnswer = Object.freeze({ result: 0, description: '', friends: [] });

function bad(description: string): AgentAnswer {
  return { result: AuthResult.incorrectParameters, description };
}

/** Checks that every field is a non-empty string; returns the problem or null. */
function checkFields(body: Body, fields: readonly string[]): AgentAnswer | null {
  for (const f of fields) {
    const v = body[f];
    if (v === undefined) return bad(`${f} is missing`);
    if (typeof v !== 'string') return bad(`${f} must be a string`);
    if (v === '') return bad(`${f} must not be empty`);
    // A lone surrogate cannot be sent to a platform (no UTF-8 for it).
    if (hasLoneSurrogate(v)) return bad(`${f} must be well-formed text (it holds an unpaired surrogate)`);
  }
  return null;
}

export class AuthService {
  readonly endpoints: ReadonlyMap<string, Endpoint>;
  private readonly cache: TtlCache<true>;
  private readonly inFlight = new InFlight<AgentAnswer>();
  private readonly limiter: Limiter;
  private readonly log: Logger;

  constructor(private readonly o: ServiceOptions) {
    this.cache = new TtlCache(o.cacheTtlMs, o.cacheMaxEntries);
    this.limiter = new Limiter(o.maxConcurrent, o.maxWaiting);
    this.log = o.log;
    const social = (p: SocialPlatform) => (p === 'microblog' ? ['player_id', 'access_token', 'access_token_secret'] : ['player_id', 'access_token']);
    this.endpoints = new Map<string, Endpoint>([
      ['/v1/authentication/test', { fields: ['player_id'], handle: () => OK }],
      ['/v1/authentication/ipaddress', {
        fields: ['player_id', 'ip'],
        handle: (b) => (isIP(b.ip as string) === 0 ? bad('ip is not a valid IPv4 or IPv6 address') : OK),
      }],
      ['/v1/personalinfo/test', { fields: ['player_id'], handle: () => TEST_FRIENDS }],
      ...(['socialnet', 'microblog'] as const).flatMap((p) => [
        [`/v1/authentication/${p}`, { fields: social(p), handle: (b: Body) => this.authenticate(p, b) }] as const,
        [`/v1/personalinfo/${p}`, { fields: social(p), handle: (b: Body) => this.personalInfo(p, b) }] as const,
      ]),
    ]);
  }

  /** Answers one request body for `path` (a key of `endpoints`). */
  handle(path: string, raw: Buffer): AgentAnswer | Promise<AgentAnswer> {
    const endpoint = this.endpoints.get(path);
    if (!endpoint) throw new Error(`no endpoint ${path}`);
    // Bytes that are not UTF-8 would reach the platform as U+FFFD, someone else's token: refused
    // as a lone surrogate in the JSON text is.
    if (!isUtf8(raw)) return bad('request body is not UTF-8 text');
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return bad('request body is not valid JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('request body must be a JSON object');
    return checkFields(body as Body, endpoint.fields) ?? endpoint.handle(body as Body);
  }

  private credentials(b: Body): Credentials {
    return { token: b.access_token as string, secret: b.access_token_secret as string | undefined };
  }

  /**
   * Verifies a token: from the cache (synchronously: a cached check costs no promise), a check
   * already running for the same player and token, or the platform.
   */
  private verify(platform: SocialPlatform, playerId: string, creds: Credentials, what: string): AgentAnswer | Promise<AgentAnswer> {
    const adapter = this.o.adapters[platform];
    if (!adapter.configured) {
      return { result: AuthResult.platformNotConfigured, description: `platform ${platform} is not configured on this authenticator` };
    }
    const digest = hash('sha256', `${creds.token}\0${creds.secret ?? ''}`, 'base64');
    const key = `${platform}\0${playerId}\0${digest}`;
    const shown = (): string => `${what} ${platform} player_id=${playerId} token=sha256:${tokenHash(creds.token)}`;
    if (this.cache.get(key)) {
      if (this.log.vEnabled(1)) this.log.vlog(1, `${shown()} result=0 cached=true`);
      return OK;
    }
    return this.inFlight.run(key, () => this.platformCall(shown(), () => adapter.verify(playerId, creds))).then((answer) => {
      if (answer.result === AuthResult.ok) this.cache.set(key, true);
      this.log.vlog(1, `${shown()} result=${answer.result} cached=false${answer.description ? ` (${answer.description})` : ''}`);
      return answer;
    });
  }

  /** Runs a platform call under the concurrency bound; failures become results 3–6. */
  private async platformCall(shown: string, fn: () => Promise<AgentAnswer>): Promise<AgentAnswer> {
    try {
      return await this.limiter.run(fn);
    } catch (err) {
      if (err instanceof PlatformError) {
        this.log.warn(`${shown} failed: ${err.message}`);
        return { result: err.result, description: err.message };
      }
      if (err instanceof BusyError) {
        this.log.warn(`${shown} refused: ${err.message}`);
        return { result: AuthResult.busy, description: err.message };
      }
      throw err;
    }
  }

  private authenticate(platform: SocialPlatform, b: Body): AgentAnswer | Promise<AgentAnswer> {
    return this.verify(platform, b.player_id as string, this.credentials(b), 'authentication');
  }

  private async personalInfo(platform: SocialPlatform, b: Body): Promise<AgentAnswer> {
    const playerId = b.player_id as string;
    const creds = this.credentials(b);
    const verdict = await this.verify(platform, playerId, creds, 'personalinfo');
    if (verdict.result !== AuthResult.ok) return verdict;
    const shown = `personalinfo ${platform} player_id=${playerId} token=sha256:${tokenHash(creds.token)}`;
    const answer = await this.platformCall(shown, () => this.o.adapters[platform].friends(playerId, creds));
    this.log.vlog(1, `${shown} result=${answer.result} friends=${answer.friends?.length ?? 0}`);
    return answer;
  }
}
