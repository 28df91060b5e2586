/** Argument checks of the session API that plugins call (`api.sessions`, a message's `reply`). */
import { gsfError } from '../errors.ts';
import { hasLoneSurrogate } from '../text.ts';
import { eventNameTooLong, MAX_EVENT_NAME_BYTES } from '../events/names.ts';

export function checkSessionId(what: string, id: unknown): asserts id is number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: session id must be a positive integer, got ${String(id)}`);
  }
}

export function checkType(what: string, type: unknown): asserts type is string {
  checkText(what, 'message type', type);
}

export function checkGroup(what: string, group: unknown): asserts group is string {
  checkText(what, 'group name', group);
}

/** A message type a handler is registered for: its events are named after it, so at most MAX_EVENT_NAME_BYTES. */
export function checkHandledType(what: string, type: unknown): asserts type is string {
  checkText(what, 'message type', type);
  if (eventNameTooLong(type)) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: message type must be at most ${MAX_EVENT_NAME_BYTES} bytes in UTF-8 (its events are named after it)`);
  }
}

function checkText(what: string, noun: string, text: unknown): asserts text is string {
  if (typeof text !== 'string' || text === '') throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: ${noun} must be a non-empty string`);
  // Sent and keyed as UTF-8: two names that differ only in unpaired surrogates would become one.
  if (hasLoneSurrogate(text)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: ${noun} holds an unpaired UTF-16 surrogate (text with no UTF-8 form)`);
}

/**
 * What a send that encodes a body throws: an encoding failure (a cycle, a BigInt in JSON) as
 * GSF_ERR_BAD_ARGUMENT, anything else as it is. Callers catch inline: no closure per send.
 */
export function encodeFailure(what: string, err: unknown): unknown {
  // msgpackr refuses a value it has no type for (a symbol) with a plain Error.
  const unknownType = err instanceof Error && err.constructor === Error && err.message.startsWith('Unknown type');
  if (err instanceof TypeError || err instanceof RangeError || unknownType) {
    return gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: the body cannot be encoded (${err.message})`);
  }
  return err;
}
