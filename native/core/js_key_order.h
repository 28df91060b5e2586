// The order and de-duplication of an object's keys as JavaScript keeps them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gsf {

/**
 * One key/value pair of an object being written, as spans of the output buffer. `key` is the
 * key exactly as written (quoted JSON text or a msgpack string), used to find duplicates and,
 * through `index_key`, array-index keys.
 */
struct KeySpan {
  size_t key_start, key_len;  // the key as written
  size_t value_start, value_end;
  bool undefined;             // the value is `undefined` (JSON.stringify leaves the key out)
  bool is_index;              // an array-index key ("0" .. "4294967294")
  uint32_t index;
};

/**
 * Whether the pairs written in source order already are what a JavaScript object would hold:
 * no array-index keys (JavaScript lists those first, ascending), no duplicates (the last value
 * wins, in the first one's place) and no undefined values.
 */
bool KeysInJsOrder(std::string_view buffer, const KeySpan* keys, size_t n);

/**
 * Writes the pairs in JavaScript's order to `out`: each pair is the key span, then `separator`
 * (may be empty), then the value span; pairs are joined by `joiner` (may be empty). Returns the
 * number of pairs written.
 */
size_t WriteKeysInJsOrder(std::string_view buffer, const KeySpan* keys, size_t n, std::string_view separator,
                          std::string_view joiner, std::string* out);

}  // namespace gsf
