#include "wake_signal.h"

#include <utility>

namespace gsf {

void WakeSignal::SetSink(Sink sink) {
  Sink old;
  {
    std::lock_guard<std::mutex> lock(sink_mu_);
    old.swap(sink_);
    sink_ = std::move(sink);
  }
  // The old sink may own resources whose release must not run under our lock.
}

void WakeSignal::Arm(const std::function<bool()>& work_waiting) {
  armed_.store(true, std::memory_order_seq_cst);
  if (work_waiting && work_waiting()) Notify();
}

void WakeSignal::Fire() {
  std::lock_guard<std::mutex> lock(sink_mu_);
  fired_.fetch_add(1, std::memory_order_relaxed);
  if (sink_) sink_();
}

}  // namespace gsf
