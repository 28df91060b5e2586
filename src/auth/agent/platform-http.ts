/**
 * Outbound GETs to the platforms, with a timeout, classified into the agent's error results:
 * unreachable, timeout, or an answer that is not JSON.
 */
import { AuthResult } from '../types.ts';

export type PlatformFailure = 'unreachable' | 'timeout' | 'bad_answer';

/** A platform call that failed for a reason other than the user's credentials. */
export class PlatformError extends Error {
  constructor(readonly kind: PlatformFailure, message: string) {
    super(message);
    this.name = 'PlatformError';
  }

  /** The agent `result` for this failure. */
  get result(): number {
    return this.kind === 'unreachable' ? AuthResult.platformUnreachable
      : this.kind === 'timeout' ? AuthResult.platformTimeout : AuthResult.platformBadAnswer;
  }
}

export interface PlatformAnswer {
  status: number;
  json: unknown;
}

/** Redirects followed for one call, as fetch itself follows them by default. */
export const MAX_PLATFORM_REDIRECTS = 5;

/** The most a platform's answer may hold: a profile or a friend list of some thousands is far less. */
export const MAX_PLATFORM_BODY_BYTES = 4 * 1024 * 1024;

/** The body as text, read up to MAX_PLATFORM_BODY_BYTES (a larger one is not read on). */
async function bodyText(res: Response, where: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  const tooBig = (): PlatformError => new PlatformError('bad_answer', `${where} answered more than ${MAX_PLATFORM_BODY_BYTES} bytes`);
  if (declared > MAX_PLATFORM_BODY_BYTES) {
    await res.body?.cancel();
    throw tooBig();
  }
  if (res.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_PLATFORM_BODY_BYTES) {
      over = true;
      break; // leaving the loop cancels the stream: the rest is not read
    }
    chunks.push(chunk);
  }
  if (over) throw tooBig();
  // As Response.text() decodes: UTF-8, a leading BOM dropped, bad bytes replaced.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * The headers that sign a request for `url` (an OAuth 1.0a `Authorization` names the URL and a
 * nonce used once): made again for each redirect's location.
 */
export type Signer = (url: string) => Record<string, string>;

/**
 * GETs `url` and parses the JSON answer, whatever its status. Messages name the platform and
 * the path only: URLs carry tokens in their query. With `sign`, each request, redirects
 * included, carries the headers it makes for its URL, and a redirect to another origin is
 * refused: the user's credentials go to the configured platform only.
 */
export async function platformGet(platform: string, url: string, timeoutMs: number, sign?: Signer): Promise<PlatformAnswer> {
  const where = `${platform} ${new URL(url).pathname}`;
  const signal = AbortSignal.timeout(timeoutMs);
  let status: number | null = null;
  let text: string;
  try {
    const res = await follow(url, where, signal, sign);
    status = res.status;
    text = await bodyText(res, where);
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    if (signal.aborted) throw new PlatformError('timeout', `${where} did not answer within ${timeoutMs} ms`);
    const cause = (err as { cause?: { code?: string } }).cause;
    const code = cause?.code ?? (err as Error).message;
    // Reached, and it answered: a body broken off is a bad answer, not an unreachable platform.
    if (status !== null) throw new PlatformError('bad_answer', `${where} answered HTTP ${status} and broke off its body (${code})`);
    throw new PlatformError('unreachable', `${where} is unreachable (${code})`);
  }
  if (status >= 500) throw new PlatformError('bad_answer', `${where} answered HTTP ${status}`);
  try {
    return { status, json: JSON.parse(text) as unknown };
  } catch {
    throw new PlatformError('bad_answer', `${where} answered HTTP ${status} with a body that is not JSON`);
  }
}

/**
 * fetch, following HTTP(S) redirects itself: a redirect it cannot follow (a loop, a location
 * that is not HTTP) was an answer of the platform, so it is a bad answer, not an unreachable one.
 */
async function follow(url: string, where: string, signal: AbortSignal, sign: Signer | undefined): Promise<Response> {
  const origin = new URL(url).origin;
  let at = url;
  for (let hop = 0; ; hop++) {
    const headers = { accept: 'application/json', ...sign?.(at) };
    const res = await fetch(at, { headers, signal, redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status < 300 || res.status > 399 || location === null) return res;
    await res.body?.cancel();
    if (hop === MAX_PLATFORM_REDIRECTS) throw new PlatformError('bad_answer', `${where} redirected more than ${MAX_PLATFORM_REDIRECTS} times`);
    let next: URL;
    try {
      next = new URL(location, at);
    } catch {
      throw new PlatformError('bad_answer', `${where} answered HTTP ${res.status} to a location that is not a URL`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new PlatformError('bad_answer', `${where} answered HTTP ${res.status} to a ${next.protocol.slice(0, -1)} location, which is not HTTP`);
    }
    if (sign !== undefined && next.origin !== origin) {
      throw new PlatformError('bad_answer', `${where} answered HTTP ${res.status} to another origin, where the user's credentials are not sent`);
    }
    at = next.href;
  }
}

/**
 * A platform's id as text: a string as is, a number only when it is an exact integer (a JSON
 * number past 2^53 has already lost digits, so it names someone else); else null.
 */
export function idText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  return typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : null;
}

/** Whether `v` is a JSON object. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
