/** Checks on text that is stored, looked up or sent on: shared by the object store, the console and the authenticator. */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `s` holds an unpaired UTF-16 surrogate (text with no UTF-8 form). */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}

/** Text a store keeps as a key as given: no NUL, no unpaired surrogate. */
export function storableText(s: string): boolean {
  return !s.includes('\0') && !LONE_SURROGATE.test(s);
}

/** `s` with each unpaired surrogate replaced by U+FFFD: text that has a UTF-8 form. */
export function wellFormed(s: string): string {
  return LONE_SURROGATE.test(s) ? s.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD') : s;
}

/** How long a value quoted back in an error message may be before it is cut (`shown`). */
const SHOWN_MAX = 80;

/**
 * `s` as an error message quotes it back: cut after 80 characters with the full length said, so
 * that a megabyte of bad input is not answered with a megabyte.
 */
export function shown(s: string): string {
  if (s.length <= SHOWN_MAX) return s;
  // Never half of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(s[SHOWN_MAX - 1]!) ? SHOWN_MAX - 1 : SHOWN_MAX;
  return `${s.slice(0, end)}… (${s.length} characters)`;
}
