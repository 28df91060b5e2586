// One-shot, coalesced "work may be ready" notification towards the dispatcher.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>

namespace gsf {

/**
 * The dispatcher arms the signal before it goes idle; the next producer of work
 * fires the sink once and disarms it. Producers only pay an atomic load while
 * the signal is disarmed, which is the common case under load.
 */
class WakeSignal {
 public:
  using Sink = std::function<void()>;

  /** Replaces the sink (empty to clear). Waits for a sink call in progress. */
  void SetSink(Sink sink);
  /**
   * Arms the signal. `work_waiting` is asked after arming, so a producer that
   * raced with us either sees the armed flag or its work is seen here.
   */
  void Arm(const std::function<bool()>& work_waiting);
  /** Fires the sink if armed; exactly one of any number of racing calls fires. */
  void Notify() {
    if (!armed_.load(std::memory_order_seq_cst)) return;
    if (!armed_.exchange(false, std::memory_order_seq_cst)) return;
    Fire();
  }
  bool Armed() const { return armed_.load(); }
  /** Number of times the sink was called (for tests and diagnostics). */
  uint64_t FiredCount() const { return fired_.load(); }

 private:
  void Fire();

  std::atomic<bool> armed_{false};
  std::atomic<uint64_t> fired_{0};
  // Held while the sink runs so SetSink never frees a sink that is being called.
  std::mutex sink_mu_;
  Sink sink_;
};

}  // namespace gsf
