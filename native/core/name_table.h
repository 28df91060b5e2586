// Process-wide string interning for event and handler names.
#pragma once

#include <cstdint>
#include <deque>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gsf {

/** The longest name an event may be given, in UTF-8 bytes (handler names are not bounded). */
constexpr size_t kMaxEventNameBytes = 256;
/** Distinct names events may be given (explicit ones and default child names) before they share one. */
constexpr size_t kMaxEventNames = 10000;
/** The name events get once kMaxEventNames names are taken. */
constexpr std::string_view kOtherEventNames = "(other event names)";

/**
 * Maps strings to dense ids >= 1 (0 means "no name"). Ids are never reused, so
 * an id handed to another thread stays valid for the life of the process.
 *
 * Handler names and message types come from code and are interned as they are. The names events
 * are given (`Invoke`'s name, `SetEventName`, `{parent}_#{n}`) may come from data, so they are
 * bounded: at most kMaxEventNames of them, each at most kMaxEventNameBytes (the profiler, the
 * metrics and every thread's cache keep one entry per name, for the life of the process).
 */
class NameTable {
 public:
  /** Returns the id of `name`, assigning the next one on first sight. */
  uint32_t Intern(std::string_view name);
  /**
   * The id of an event's name (at most kMaxEventNameBytes): `name`'s own while fewer than
   * kMaxEventNames event names were added this way, else that of kOtherEventNames.
   */
  uint32_t InternEventName(std::string_view name);
  /** SPEC's default name of the `n`-th event an event named `parent` creates, `{parent}_#{n}`; `parent` itself past kMaxEventNameBytes. */
  static std::string ChildName(std::string_view parent, uint64_t n);
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
  /** Names InternEventName added. */
  size_t event_names_ = 0;
};

}  // namespace gsf
