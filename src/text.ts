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
