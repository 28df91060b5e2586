// The process-wide runtime flag snapshot, shared by the main thread and workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace gsf {

/**
 * A JSON text plus a version. Workers poll Version() (one atomic load) and
 * re-read the text only when it moved, so the text itself may sit behind a mutex.
 */
class ConfigBlob {
 public:
  /** Replaces the text and bumps the version. */
  void Set(std::string text);
  std::string Get() const;
  uint64_t Version() const { return version_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::string text_ = "{}";
  std::atomic<uint64_t> version_{0};
};

}  // namespace gsf
