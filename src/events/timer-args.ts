/**
 * The checks of `api.timers` arguments, made where a timer is declared (`register`) as where it
 * starts, so a bad one is a `GSF_ERR_BAD_ARGUMENT` at the call that passed it.
 */
import { gsfError } from '../errors.ts';
import { eventNameTooLong, MAX_EVENT_NAME_BYTES } from './names.ts';

/** A refused argument as a message shows it: a number as itself, a string quoted with its type. */
export function shown(v: unknown): string {
  if (typeof v === 'string') return `a string ('${v}')`;
  if (typeof v === 'number' || v === undefined || v === null) return String(v);
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Throws `GSF_ERR_BAD_ARGUMENT` for a delay or interval that is not a number of ms, or a bad `name`. */
export function checkTimerArgs(event: string, delayMs: unknown, intervalMs: unknown, name: unknown): void {
  for (const [label, v] of [['delay', delayMs], ['interval', intervalMs]] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `timer ${label} must be a non-negative number of ms, got ${shown(v)}`);
    }
  }
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `timer '${event}': name must be a non-empty string`);
  }
  if (name !== undefined && eventNameTooLong(name)) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `timer '${event}': name must be at most ${MAX_EVENT_NAME_BYTES} bytes in UTF-8`);
  }
}

/**
 * Throws `GSF_ERR_BAD_ARGUMENT` unless `id` can be a timer id: a non-negative safe integer, as
 * `after` and `every` return (0 is "no timer", which cancel answers false).
 */
export function checkTimerId(id: unknown): asserts id is number {
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return;
  throw gsfError('GSF_ERR_BAD_ARGUMENT', `timers.cancel: id must be a timer id (a non-negative safe integer, as after and every return), got ${shown(id)}`);
}
