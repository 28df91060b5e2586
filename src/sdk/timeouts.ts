/** How the SDK reads its time limits (`connectTimeoutMs`, `requestTimeoutMs`, a request's `timeoutMs`). */

/** The longest wait a timer can hold (2^31 - 1 ms); a longer time limit is none. */
export const MAX_TIMER_MS = 0x7fffffff;

/**
 * Returns why `value`, the time limit `name`, is refused, or null: a limit is a number of ms, 0
 * or more (0, Infinity or anything past MAX_TIMER_MS: no limit). A negative one or NaN is a
 * mistake, refused alike for every limit: a negative one meant no limit for `connectTimeoutMs`
 * and an at-once timeout for a request.
 */
export function timeoutProblem(name: string, value: unknown): TypeError | RangeError | null {
  if (typeof value !== 'number') return new TypeError(`${name} must be a number of ms (got ${typeof value})`);
  if (value >= 0) return null;
  return new RangeError(`${name} must be a number of ms, 0 or more (0 or Infinity: no limit) (got ${String(value)})`);
}
