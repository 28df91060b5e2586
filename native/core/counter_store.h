// Named counters (SPEC 2.5): (category, name) -> int64 or double, with a description.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gsf {

struct CounterValue {
  bool is_double = false;
  double value = 0;  // an int64 counter is reported exactly while below 2^53
  std::string description;
};

/**
 * Counters are bumped from every worker thread on hot paths, so an existing
 * counter is changed under the shared lock with atomics only. Creating,
 * removing, retyping or describing a counter takes the exclusive lock; that is
 * also what makes a type change atomic with respect to concurrent increases.
 */
class CounterStore {
 public:
  /** Sets value and type, creating the counter if needed; keeps the description unless one is given. */
  void Update(std::string_view category, std::string_view name, double value, bool is_double,
              const std::string* description = nullptr);
  /** Adds `amount` (truncated toward zero on an int counter); creates an int counter at 0 first. */
  double Increase(std::string_view category, std::string_view name, double amount);
  double Decrease(std::string_view category, std::string_view name, double amount) {
    return Increase(category, name, -amount);
  }
  /** False if there is no such counter. */
  bool Get(std::string_view category, std::string_view name, CounterValue* out) const;
  /** The value alone (no description copy); false if there is no such counter. */
  bool Value(std::string_view category, std::string_view name, double* out) const;
  /**
   * A number that names this counter for `ValueAt` (a reader polling one counter skips the name
   * lookups); -1 if there is no such counter. A removed counter's id stays valid and reads as
   * absent; a counter created again under the same name gets a new id.
   */
  int64_t Handle(std::string_view category, std::string_view name) const;
  /** The value of the counter with this id; false if it was removed or never existed. */
  bool ValueAt(int64_t id, double* out) const;
  /** The value truncated toward zero; false if there is no such counter. */
  bool ReadInt(std::string_view category, std::string_view name, int64_t* out) const;
  bool SetDescription(std::string_view category, std::string_view name, const std::string& description);
  bool Remove(std::string_view category, std::string_view name);
  /** Category names, ascending. Empty categories disappear with their last counter. */
  std::vector<std::string> Categories() const;
  /** Counter names of a category, ascending; false if the category does not exist. */
  bool List(std::string_view category, std::vector<std::string>* out) const;
  /**
   * Changes whenever a category appears or disappears, so a reader can cache how a path splits
   * into category and counter and check the cache with one load.
   */
  uint32_t LayoutGeneration() const { return layout_generation_.load(std::memory_order_acquire); }
  /** The generation's own memory, for a JS view that reads it without a call (Atomics.load). */
  const std::atomic<uint32_t>* LayoutGenerationAddress() const { return &layout_generation_; }

 private:
  struct Counter {
    int64_t id = 0;
    bool removed = false;  // changed under the exclusive lock
    std::atomic<bool> is_double{false};
    // Raw bits of either an int64_t or a double, depending on is_double.
    std::atomic<uint64_t> bits{0};
    std::string description;
  };
  using Category = std::map<std::string, std::unique_ptr<Counter>, std::less<>>;

  Counter* FindLocked(std::string_view category, std::string_view name) const;
  static double ValueOf(const Counter& c);
  static void Store(Counter& c, double value, bool is_double);
  static double Add(Counter& c, double amount);
  /** The slot for (category, name), created if needed; the exclusive lock is held. */
  std::unique_ptr<Counter>& SlotLocked(std::string_view category, std::string_view name);

  mutable std::shared_mutex mu_;
  std::map<std::string, Category, std::less<>> categories_;
  std::atomic<uint32_t> layout_generation_{0};
  // Every counter ever created, by id; removed ones stay allocated so an id never dangles.
  std::vector<Counter*> by_id_;
  std::vector<std::unique_ptr<Counter>> retired_;
  static_assert(sizeof(std::atomic<uint32_t>) == 4 && std::atomic<uint32_t>::is_always_lock_free,
                "the layout generation is read from JS as one Int32Array element");
};

}  // namespace gsf
