#include "counter_store.h"

#include <cmath>
#include <cstring>
#include <mutex>

namespace gsf {

namespace {

uint64_t BitsOf(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

double DoubleOf(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

// Saturates instead of invoking undefined behaviour on out-of-range casts.
int64_t TruncToInt(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(std::trunc(v));
}

}  // namespace

CounterStore::Counter* CounterStore::FindLocked(std::string_view category, std::string_view name) const {
  auto cat = categories_.find(category);
  if (cat == categories_.end()) return nullptr;
  auto it = cat->second.find(name);
  return it == cat->second.end() ? nullptr : it->second.get();
}

double CounterStore::ValueOf(const Counter& c) {
  uint64_t b = c.bits.load(std::memory_order_relaxed);
  return c.is_double.load(std::memory_order_relaxed) ? DoubleOf(b)
                                                     : static_cast<double>(static_cast<int64_t>(b));
}

void CounterStore::Store(Counter& c, double value, bool is_double) {
  uint64_t b = is_double ? BitsOf(value) : static_cast<uint64_t>(TruncToInt(value));
  c.bits.store(b, std::memory_order_relaxed);
}

double CounterStore::Add(Counter& c, double amount) {
  if (!c.is_double.load(std::memory_order_relaxed)) {
    // Two's-complement wrap-around on overflow, like the C++ engine's int64 counters.
    uint64_t delta = static_cast<uint64_t>(TruncToInt(amount));
    uint64_t after = c.bits.fetch_add(delta, std::memory_order_relaxed) + delta;
    return static_cast<double>(static_cast<int64_t>(after));
  }
  uint64_t old = c.bits.load(std::memory_order_relaxed);
  double next;
  do {
    next = DoubleOf(old) + amount;
  } while (!c.bits.compare_exchange_weak(old, BitsOf(next), std::memory_order_relaxed));
  return next;
}

std::unique_ptr<CounterStore::Counter>& CounterStore::SlotLocked(std::string_view category,
                                                                  std::string_view name) {
  auto cat = categories_.find(category);
  if (cat == categories_.end()) {
    cat = categories_.emplace(std::string(category), Category()).first;
    layout_generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  auto it = cat->second.find(name);
  if (it == cat->second.end()) {
    auto counter = std::make_unique<Counter>();
    counter->id = static_cast<int64_t>(by_id_.size());
    by_id_.push_back(counter.get());
    it = cat->second.emplace(std::string(name), std::move(counter)).first;
  }
  return it->second;
}

void CounterStore::Update(std::string_view category, std::string_view name, double value, bool is_double,
                          const std::string* description) {
  if (!description) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    Counter* c = FindLocked(category, name);
    if (c && c->is_double.load(std::memory_order_relaxed) == is_double) {
      Store(*c, value, is_double);
      return;
    }
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto& slot = SlotLocked(category, name);
  slot->is_double.store(is_double, std::memory_order_relaxed);
  Store(*slot, value, is_double);
  if (description) slot->description = *description;
}

double CounterStore::Increase(std::string_view category, std::string_view name, double amount) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (Counter* c = FindLocked(category, name)) return Add(*c, amount);
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  return Add(*SlotLocked(category, name), amount);
}

bool CounterStore::Get(std::string_view category, std::string_view name, CounterValue* out) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Counter* c = FindLocked(category, name);
  if (!c) return false;
  out->is_double = c->is_double.load(std::memory_order_relaxed);
  out->value = ValueOf(*c);
  out->description = c->description;
  return true;
}

bool CounterStore::Value(std::string_view category, std::string_view name, double* out) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Counter* c = FindLocked(category, name);
  if (!c) return false;
  *out = ValueOf(*c);
  return true;
}

int64_t CounterStore::Handle(std::string_view category, std::string_view name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Counter* c = FindLocked(category, name);
  return c ? c->id : -1;
}

bool CounterStore::ValueAt(int64_t id, double* out) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (id < 0 || static_cast<size_t>(id) >= by_id_.size()) return false;
  const Counter* c = by_id_[static_cast<size_t>(id)];
  if (c->removed) return false;
  *out = ValueOf(*c);
  return true;
}

bool CounterStore::ReadInt(std::string_view category, std::string_view name, int64_t* out) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Counter* c = FindLocked(category, name);
  if (!c) return false;
  uint64_t b = c->bits.load(std::memory_order_relaxed);
  *out = c->is_double.load(std::memory_order_relaxed) ? TruncToInt(DoubleOf(b)) : static_cast<int64_t>(b);
  return true;
}

bool CounterStore::SetDescription(std::string_view category, std::string_view name,
                                  const std::string& description) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  Counter* c = FindLocked(category, name);
  if (!c) return false;
  c->description = description;
  return true;
}

bool CounterStore::Remove(std::string_view category, std::string_view name) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto cat = categories_.find(category);
  if (cat == categories_.end()) return false;
  auto it = cat->second.find(name);
  if (it == cat->second.end()) return false;
  it->second->removed = true;
  retired_.push_back(std::move(it->second));
  cat->second.erase(it);
  if (cat->second.empty()) {
    categories_.erase(cat);
    layout_generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  return true;
}

std::vector<std::string> CounterStore::Categories() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  out.reserve(categories_.size());
  for (const auto& kv : categories_) out.push_back(kv.first);
  return out;
}

bool CounterStore::List(std::string_view category, std::vector<std::string>* out) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto cat = categories_.find(category);
  if (cat == categories_.end()) return false;
  out->clear();
  out->reserve(cat->second.size());
  for (const auto& kv : cat->second) out->push_back(kv.first);
  return true;
}

}  // namespace gsf
