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
