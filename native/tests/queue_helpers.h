// Shared fixtures for the tag queue tests.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "../core/clock.h"
#include "../core/profiler.h"
#include "../core/tag_queue.h"
#include "../core/wake_signal.h"

struct Taken {
  uint64_t id, tag;
  uint32_t name_id, handler_id;
  uint64_t session_id;
  int kind;
  std::string payload;
};

/**
 * A private queue with its own profiler and wake signal. One run queue unless asked otherwise:
 * the single-thread tests check what one run queue does (claims take tags in ready order);
 * the concurrency tests spread tags over as many as the server uses.
 */
struct QueueFixture {
  explicit QueueFixture(size_t run_queues = 1) : queue(&profiler, &wake, run_queues) {}
  gsf::Profiler profiler;
  gsf::WakeSignal wake;
  gsf::TagQueue queue;
  // Per slot: when its claim was taken, and the last claimed index it started.
  std::array<int64_t, gsf::TagQueue::kMaxSlots> take_ns{};
  std::array<int32_t, gsf::TagQueue::kMaxSlots> last_started{};

  /**
   * Starts claimed event `i` the way a worker does: the start (µs after the claim) in the
   * slot's progress cell, then the swap from the last index started. False if revoked.
   */
  bool Start(int slot, int32_t i, double* start_ms = nullptr) {
    std::atomic<int32_t>* cells = queue.ProgressCells() + static_cast<size_t>(slot) * gsf::kProgressStride;
    const int64_t us = (gsf::NowNs() - take_ns[static_cast<size_t>(slot)]) / 1000;
    cells[gsf::kProgressStartUs].store(static_cast<int32_t>(us));
    cells[gsf::kProgressNameId].store(0);
    int32_t expected = last_started[static_cast<size_t>(slot)];
    if (!cells[gsf::kProgressIndex].compare_exchange_strong(expected, i)) return false;
    last_started[static_cast<size_t>(slot)] = i;
    if (start_ms) *start_ms = static_cast<double>(us) / 1000.0;
    return true;
  }

  /** Takes into caller buffers, remembering the claim's time for Start. */
  int64_t TakeRaw(int slot, double* meta, size_t max, uint8_t* bytes, size_t bytes_len) {
    int64_t n = queue.Take(slot, meta, max, bytes, bytes_len);
    if (n > 0) {
      take_ns[static_cast<size_t>(slot)] = gsf::NowNs();
      last_started[static_cast<size_t>(slot)] = gsf::kProgressNone;
    }
    return n;
  }

  uint64_t Push(uint64_t tag, const std::string& payload = "", uint32_t name_id = 0, uint64_t session = 0,
                uint8_t kind = 0, uint32_t handler_id = 0) {
    gsf::EventInput in;
    in.tag = tag;
    in.name_id = name_id;
    in.handler_id = handler_id;
    in.session_id = session;
    in.kind = kind;
    in.payload = reinterpret_cast<const uint8_t*>(payload.data());
    in.payload_len = payload.size();
    return queue.Push(in);
  }

  /** Takes into fresh buffers; `result` receives the raw return value. */
  std::vector<Taken> Take(int slot, size_t max, size_t bytes_len = 4096, int64_t* result = nullptr) {
    std::vector<double> meta(max * gsf::kTakeStride + 1);
    std::vector<uint8_t> bytes(bytes_len + 1);
    int64_t n = TakeRaw(slot, meta.data(), max, bytes.data(), bytes_len);
    if (result) *result = n;
    std::vector<Taken> out;
    for (int64_t i = 0; i < n; ++i) {
      const double* m = &meta[static_cast<size_t>(i) * gsf::kTakeStride];
      Taken t{static_cast<uint64_t>(m[0]), static_cast<uint64_t>(m[1]), static_cast<uint32_t>(m[2]),
              static_cast<uint32_t>(m[3]), static_cast<uint64_t>(m[4]), static_cast<int>(m[5]),
              std::string(reinterpret_cast<const char*>(bytes.data()) + static_cast<size_t>(m[6]),
                          static_cast<size_t>(m[7]))};
      out.push_back(t);
    }
    return out;
  }

  /** Completes `n` events with zeroed timings (nothing run, nothing profiled). */
  bool CompleteAll(int slot, size_t n, uint32_t flags = gsf::kFlagNotRun) {
    std::vector<double> timings(n * gsf::kCompleteStride + 1, 0.0);
    for (size_t i = 0; i < n; ++i) timings[i * gsf::kCompleteStride + gsf::kFlags] = flags;
    return queue.Complete(slot, n, timings.data()) != gsf::kCompleteRevoked;
  }
};

inline std::vector<uint64_t> Ids(const std::vector<Taken>& v) {
  std::vector<uint64_t> out;
  for (const Taken& t : v) out.push_back(t.id);
  return out;
}

inline std::vector<uint64_t> DroppedIds(const std::vector<gsf::DroppedEvent>& v) {
  std::vector<uint64_t> out;
  for (const auto& d : v) out.push_back(d.id);
  return out;
}
