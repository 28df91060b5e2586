// Shared fixtures for the tag queue tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

/** A private queue with its own profiler and wake signal. */
struct QueueFixture {
  gsf::Profiler profiler;
  gsf::WakeSignal wake;
  gsf::TagQueue queue{&profiler, &wake};

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
    int64_t n = queue.Take(slot, meta.data(), max, bytes.data(), bytes_len);
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
    return queue.Complete(slot, n, timings.data());
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
