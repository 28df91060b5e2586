// A hash map that keeps the nodes of erased entries for its next inserts.
//
// The tag queue's maps gain an entry when the main thread or an I/O thread pushes an event of a
// tag with no state, and lose it when an event thread completes that tag's last event. With a
// plain std::unordered_map every such event mallocs on the pushing thread and frees on another:
// the chunk goes back to the pushing thread's arena, whose lock every event thread then shares.
// Here an erase keeps the node (up to kKeep of them) and an insert reuses one, so a run queue in
// steady state allocates nothing. The map is guarded by its run queue's lock, like the rest of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gsf {

template <class Value>
class SparingMap {
 public:
  using Map = std::unordered_map<uint64_t, Value>;
  using iterator = typename Map::iterator;
  using const_iterator = typename Map::const_iterator;
  /** Nodes kept at most; past it an erase frees its node as usual. */
  static constexpr size_t kKeep = 4096;

  /** The value of `key`, value-initialized (from a kept node when there is one) when absent. */
  Value& operator[](uint64_t key) {
    auto it = map_.find(key);
    if (it != map_.end()) return it->second;
    if (spare_.empty()) return map_.try_emplace(key).first->second;
    typename Map::node_type node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = key;
    node.mapped() = Value{};
    return map_.insert(std::move(node)).position->second;
  }

  iterator find(uint64_t key) { return map_.find(key); }
  const_iterator find(uint64_t key) const { return map_.find(key); }
  iterator begin() { return map_.begin(); }
  iterator end() { return map_.end(); }
  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }
  size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }
  size_t spare() const { return spare_.size(); }

  /** Erases the entry at `it`, keeping its node; returns the next entry's iterator. */
  iterator erase(iterator it) {
    iterator next = std::next(it);
    typename Map::node_type node = map_.extract(it);
    if (spare_.size() < kKeep) spare_.push_back(std::move(node));
    return next;
  }

  /** Erases `key`'s entry if there is one; returns how many were erased (0 or 1). */
  size_t erase(uint64_t key) {
    auto it = map_.find(key);
    if (it == map_.end()) return 0;
    erase(it);
    return 1;
  }

 private:
  Map map_;
  std::vector<typename Map::node_type> spare_;
};

}  // namespace gsf
