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
  /** The value truncated toward zero; false if there is no such counter. */
  bool ReadInt(std::string_view category, std::string_view name, int64_t* out) const;
  bool SetDescription(std::string_view category, std::string_view name, const std::string& description);
  bool Remove(std::string_view category, std::string_view name);
  /** Category names, ascending. Empty categories disappear with their last counter. */
  std::vector<std::string> Categories() const;
  /** Counter names of a category, ascending; false if the category does not exist. */
  bool List(std::string_view category, std::vector<std::string>* out) const;

 private:
  struct Counter {
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

  mutable std::shared_mutex mu_;
  std::map<std::string, Category, std::less<>> categories_;
};

}  // namespace gsf
