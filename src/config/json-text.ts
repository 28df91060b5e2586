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

/**
 * The first key an object of valid JSON `text` repeats, with the keys leading to that object
 * (`[]` for the top-level one), or null. JSON.parse keeps a repeated key's last value without a
 * word: in a file a person edits (a merge gone wrong) that is a declaration lost.
 */
export function repeatedKey(text: string): { key: string; path: string[] } | null {
  // Per open object or array: the keys seen (objects only), the path, and whether a key comes next.
  const stack: Array<{ keys: Set<string> | null; path: string[]; keyNext: boolean; lastKey: string }> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const top = stack[stack.length - 1];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.keys && top.keyNext) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return { key, path: top.path };
        top.keys.add(key);
        top.lastKey = key;
        top.keyNext = false;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      const path = top === undefined ? [] : top.keys ? [...top.path, top.lastKey] : top.path;
      stack.push({ keys: c === '{' ? new Set() : null, path, keyNext: c === '{', lastKey: '' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && top?.keys) {
      top.keyNext = true;
    }
  }
  return null;
}
