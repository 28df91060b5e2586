// Process-wide string interning for event and handler names.
#pragma once

#include <cstdint>
#include <deque>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gsf {

/**
 * Maps strings to dense ids >= 1 (0 means "no name"). Ids are never reused, so
 * an id handed to another thread stays valid for the life of the process.
 */
class NameTable {
 public:
  /** Returns the id of `name`, assigning the next one on first sight. */
  uint32_t Intern(std::string_view name);
  /** Returns the id of `name`, or 0 if it was never interned. */
  uint32_t Find(std::string_view name) const;
  /** Returns the string of `id`, or "" for 0 and unknown ids. */
  std::string NameOf(uint32_t id) const;
  size_t Size() const;

 private:
  mutable std::shared_mutex mu_;
  // deque keeps element addresses stable, so the map can key on views into it.
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace gsf
