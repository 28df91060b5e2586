// Which handlers' events usually await: a claim ends a tag's run after such an event.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gsf {

/**
 * One byte per handler id, set by event workers when an event of that handler parks (its
 * handler awaited, or it waits for an object commit) and cleared when one finishes without
 * parking. Take reads it: the later events of a tag whose event is likely to park would only be
 * skipped and handed back, so a claim takes no more of that tag and takes other tags' events
 * instead. A hint only: a wrong one costs a claim more or a skipped event, never order.
 */
class ParkHints {
 public:
  static constexpr size_t kHandlers = size_t{1} << 16;

  bool Parks(uint32_t handler_id) const {
    return handler_id < kHandlers && cells_[handler_id].load(std::memory_order_relaxed) != 0;
  }
  /** The cells, shared with every thread's JavaScript (written with plain byte stores). */
  std::atomic<uint8_t>* Cells() { return cells_; }
  void Clear() {
    for (auto& c : cells_) c.store(0, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint8_t> cells_[kHandlers] = {};
};

}  // namespace gsf
