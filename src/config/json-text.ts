/**
 * The JSON of a file a person edits (a manifest, a plugin's gsf-plugin.json, object
 * declarations): a UTF-8 byte order mark before it is allowed, as editors on Windows write one,
 * and a parse error's message is one line, whatever the file holds.
 */

/** Parses `text`, skipping a leading byte order mark; a syntax error's message has its control characters escaped. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    // V8 quotes the text near the error, line feeds included: one line says it.
    // eslint-disable-next-line no-control-regex -- the control characters are what is escaped
    const message = (err as Error).message.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g,
      (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
    throw new SyntaxError(message, { cause: err });
  }
}
