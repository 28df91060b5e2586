// The continuations a host service holds for plugins: what to call later (an object, result or
// account answer) and the user data the plugin handed over with it. Each entry leaves the table
// once, either taken to run (its service then releases the user data) or dropped (released
// here): when its event failed or timed out, or its plugin copy was retired.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "plugin_hooks.h"

namespace gsf {

struct NativePlugin;

/** `C` holds at least `plugin`, `event_id`, `drop` and `user_data`. */
template <typename C>
class ContinuationTable {
 public:
  explicit ContinuationTable(uint64_t first_id = 1) : next_(first_id) {}

  /** Holds `c`; returns its id. */
  uint64_t Add(C c) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = next_++;
    map_.emplace(id, std::move(c));
    return id;
  }

  /** Takes continuation `id` out to run it; false if there is none (ran, dropped, or never made). */
  bool Take(uint64_t id, C* out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(id);
    if (it == map_.end()) return false;
    *out = std::move(it->second);
    map_.erase(it);
    return true;
  }

  void Drop(uint64_t id) {
    DropWhere([id](uint64_t key, const C&) { return key == id; });
  }

  /** Drops the continuations of event `event_id` (0: none); returns how many. */
  size_t DropEvent(uint64_t event_id) {
    if (event_id == 0) return 0;
    return DropWhere([event_id](uint64_t, const C& c) { return c.event_id == event_id; });
  }

  /** Drops those of a plugin copy (null: every copy); returns how many. */
  size_t DropOf(const NativePlugin* plugin) {
    return DropWhere([plugin](uint64_t, const C& c) { return plugin == nullptr || c.plugin == plugin; });
  }

  size_t Count() {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
  }

 private:
  /** Removes the matching entries under the lock, then releases their user data outside it. */
  template <typename Match>
  size_t DropWhere(Match&& match) {
    std::vector<C> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = map_.begin(); it != map_.end();) {
        if (match(it->first, it->second)) {
          dropped.push_back(std::move(it->second));
          it = map_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (const C& c : dropped) hooks::ReleaseData(c.drop, c.user_data);
    return dropped.size();
  }

  std::mutex mu_;
  std::unordered_map<uint64_t, C> map_;
  uint64_t next_;
};

}  // namespace gsf
