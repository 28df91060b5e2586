// Monotonic time source shared by the queue, the timers and the profiler.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace gsf {

using ClockFn = int64_t (*)();

inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Tests replace the clock so per-second rates and one-minute windows can be
// checked without sleeping. Production never sets it, so the cost is one
// relaxed load and a predictable branch.
inline std::atomic<ClockFn> g_clock_override{nullptr};

inline int64_t NowNs() {
  ClockFn fn = g_clock_override.load(std::memory_order_relaxed);
  return fn ? fn() : SteadyNowNs();
}

/** Installs a replacement clock; nullptr restores the steady clock. */
inline void SetClockForTesting(ClockFn fn) { g_clock_override.store(fn); }

constexpr int64_t kNsPerMs = 1000000;
constexpr int64_t kNsPerSec = 1000000000;

}  // namespace gsf
