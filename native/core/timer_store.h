// One-shot and repeating timers that fire as events on the timer tag.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gsf {

class TagQueue;
class WakeSignal;

/**
 * A min-heap of due times over the live timers. Cancelled timers leave stale
 * heap entries behind that are skipped when they surface, which keeps Cancel
 * O(1); the heap is rebuilt if stale entries ever dominate it.
 */
class TimerStore {
 public:
  TimerStore(TagQueue* queue, WakeSignal* wake);

  /**
   * Adds a timer due after `delay_ms`, then every `interval_ms` if > 0; returns its id. With
   * `reserved` (from Reserve), the timer takes that id; 0 is returned, and nothing added, when
   * the reservation was cancelled or released meanwhile.
   */
  uint64_t Add(double delay_ms, double interval_ms, uint32_t name_id, uint32_t handler_id,
               const uint8_t* payload, size_t payload_len, uint64_t reserved = 0);
  /**
   * An id for a timer added later (an event holds its timers until its run ends or its object
   * changes are durable): Cancel of it before then cancels the timer to come.
   */
  uint64_t Reserve();
  /** Lets a reservation go without a timer (the event that held it was dropped). */
  void Release(uint64_t id);
  /** False if unknown or already fired (one-shot). */
  bool Cancel(uint64_t id);
  /**
   * Pushes every due timer onto the timer tag in due order; returns whole ms
   * until the next due time (>= 0), or -1 if no timer is left.
   */
  int64_t Fire();
  size_t Count() const;
  /** True when a timer due before the earliest one known at the last Fire was added since. */
  bool EarlierAdded() const { return earlier_added_.load(); }
  /** Drops every timer and takes new ones again (after a stop); returns how many there were. */
  size_t Clear();
  /**
   * A server stop began: timers fire no more, and Add starts none (it returns 0 and counts it)
   * until Clear. What an onStop hook or an event of the drain starts would never fire.
   */
  void Stop() { stopped_.store(true); }
  /** Timers Add did not start because the server was stopping, since start. */
  uint64_t RefusedAtStop() const { return refused_at_stop_.load(std::memory_order_relaxed); }
  /**
   * Events waiting on the timer tag past which a repeating timer skips its period instead of
   * adding one more (a handler slower than its period would otherwise grow the queue forever).
   */
  static constexpr uint64_t kMaxBacklog = 1000;
  /** Periods repeating timers skipped because of the backlog, since start. */
  uint64_t SkippedTotal() const { return skipped_total_.load(std::memory_order_relaxed); }

 private:
  struct Timer {
    int64_t due_ns;
    int64_t interval_ns;
    uint32_t name_id, handler_id;
    std::string payload;
  };
  struct Entry {
    int64_t due_ns;
    uint64_t seq;  // add order breaks ties between timers due at the same time
    uint64_t id;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.due_ns != b.due_ns ? a.due_ns > b.due_ns : a.seq > b.seq;
    }
  };

  void PushEntryLocked(int64_t due_ns, uint64_t id);
  void CompactLocked();

  TagQueue* queue_;
  WakeSignal* wake_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Timer> timers_;
  /** Ids reserved and not yet added, released or cancelled. */
  std::unordered_set<uint64_t> reserved_;
  std::vector<Entry> heap_;
  std::atomic<uint64_t> skipped_total_{0};
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> refused_at_stop_{0};
  uint64_t next_id_ = 1;
  uint64_t next_seq_ = 0;
  std::atomic<bool> earlier_added_{false};
};

}  // namespace gsf
