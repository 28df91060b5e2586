// Replaces the core's clock for one test, so time-based figures are exact.
#pragma once

#include <atomic>
#include <cstdint>

#include "../core/clock.h"

namespace testing_clock {

inline std::atomic<int64_t> g_now{0};

inline int64_t Now() { return g_now.load(); }

class FakeClock {
 public:
  explicit FakeClock(int64_t start_ns = 1000 * gsf::kNsPerSec) {
    g_now.store(start_ns);
    gsf::SetClockForTesting(&Now);
  }
  ~FakeClock() { gsf::SetClockForTesting(nullptr); }
  void AdvanceMs(double ms) { g_now.fetch_add(static_cast<int64_t>(ms * gsf::kNsPerMs)); }
  void AdvanceSec(int64_t s) { g_now.fetch_add(s * gsf::kNsPerSec); }
  void SetNs(int64_t ns) { g_now.store(ns); }
  int64_t ns() const { return g_now.load(); }
};

}  // namespace testing_clock

using testing_clock::FakeClock;
