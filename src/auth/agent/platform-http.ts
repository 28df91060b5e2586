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

/**
 * GETs `url` and parses the JSON answer, whatever its status. Messages name the platform and
 * the path only: URLs carry tokens in their query.
 */
export async function platformGet(platform: string, url: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<PlatformAnswer> {
  const where = `${platform} ${new URL(url).pathname}`;
  const signal = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (signal.aborted) throw new PlatformError('timeout', `${where} did not answer within ${timeoutMs} ms`);
    const cause = (err as { cause?: { code?: string } }).cause;
    throw new PlatformError('unreachable', `${where} is unreachable (${cause?.code ?? (err as Error).message})`);
  }
  if (status >= 500) throw new PlatformError('bad_answer', `${where} answered HTTP ${status}`);
  try {
    return { status, json: JSON.parse(text) as unknown };
  } catch {
    throw new PlatformError('bad_answer', `${where} answered HTTP ${status} with a body that is not JSON`);
  }
}

/** Whether `v` is a JSON object. */
/**
 * A platform's id as text: a string as is, a number only when it is an exact integer (a JSON
 * number past 2^53 has already lost digits, so it names someone else); else null.
 */
export function idText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  return typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : null;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
