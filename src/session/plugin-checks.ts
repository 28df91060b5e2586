/** Argument checks of the session API that plugins call (`api.sessions`, a message's `reply`). */
import { gsfError } from '../errors.ts';
import { hasLoneSurrogate } from '../text.ts';

export function checkSessionId(what: string, id: unknown): asserts id is number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: session id must be a positive integer, got ${String(id)}`);
  }
}

export function checkType(what: string, type: unknown): asserts type is string {
  if (typeof type !== 'string' || type === '') throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: message type must be a non-empty string`);
  // Sent and keyed as UTF-8: two names that differ only in unpaired surrogates would become one.
  if (hasLoneSurrogate(type)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: message type holds an unpaired UTF-16 surrogate (text with no UTF-8 form)`);
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
