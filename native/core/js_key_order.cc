#include "js_key_order.h"

#include <algorithm>
#include <unordered_map>

namespace gsf {

namespace {

std::string_view KeyOf(std::string_view buffer, const KeySpan& k) { return buffer.substr(k.key_start, k.key_len); }

// For each pair, the index of the first pair with the same key (itself when it is the first).
std::vector<size_t> FirstOccurrences(std::string_view buffer, const KeySpan* keys, size_t n, bool* any_duplicate) {
  std::vector<size_t> first(n);
  *any_duplicate = false;
  if (n <= 16) {
    for (size_t i = 0; i < n; ++i) {
      first[i] = i;
      for (size_t j = 0; j < i; ++j) {
        if (KeyOf(buffer, keys[j]) == KeyOf(buffer, keys[i])) {
          first[i] = first[j];
          *any_duplicate = true;
          break;
        }
      }
    }
    return first;
  }
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto [it, inserted] = seen.emplace(KeyOf(buffer, keys[i]), i);
    first[i] = it->second;
    if (!inserted) *any_duplicate = true;
  }
  return first;
}

}  // namespace

bool KeysInJsOrder(std::string_view buffer, const KeySpan* keys, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (keys[i].is_index || keys[i].undefined) return false;
  }
  if (n <= 16) {  // the common small object: no allocation
    for (size_t i = 1; i < n; ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (KeyOf(buffer, keys[j]) == KeyOf(buffer, keys[i])) return false;
      }
    }
    return true;
  }
  bool duplicate = false;
  FirstOccurrences(buffer, keys, n, &duplicate);
  return !duplicate;
}

size_t WriteKeysInJsOrder(std::string_view buffer, const KeySpan* keys, size_t n, std::string_view separator,
                          std::string_view joiner, std::string* out) {
  bool duplicate = false;
  std::vector<size_t> first = FirstOccurrences(buffer, keys, n, &duplicate);
  // The value of each distinct key is its last occurrence's.
  std::vector<size_t> last(n);
  for (size_t i = 0; i < n; ++i) last[first[i]] = i;
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (first[i] == i && keys[i].is_index) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a].index < keys[b].index; });
  for (size_t i = 0; i < n; ++i) {
    if (first[i] == i && !keys[i].is_index) order.push_back(i);
  }
  size_t written = 0;
  for (size_t i : order) {
    const KeySpan& value = keys[last[i]];
    if (value.undefined) continue;
    if (written++ > 0) out->append(joiner);
    out->append(KeyOf(buffer, keys[i]));
    out->append(separator);
    out->append(buffer.substr(value.value_start, value.value_end - value.value_start));
  }
  return written;
}

}  // namespace gsf
