#include "timer_store.h"

#include <algorithm>
#include <cmath>

#include "clock.h"
#include "tag_queue.h"
#include "wake_signal.h"

namespace gsf {

namespace {

int64_t MsToNs(double ms) {
  if (!std::isfinite(ms) || ms <= 0) return 0;
  // About 292 years; anything longer is "never" for a game server.
  if (ms >= 9.2e12) return INT64_MAX / 2;
  // A positive time is at least 1 ns: an interval of 0 would make a repeating timer one-shot.
  return std::max<int64_t>(1, static_cast<int64_t>(ms * kNsPerMs));
}

}  // namespace

TimerStore::TimerStore(TagQueue* queue, WakeSignal* wake) : queue_(queue), wake_(wake) {}

void TimerStore::PushEntryLocked(int64_t due_ns, uint64_t id) {
  heap_.push_back(Entry{due_ns, next_seq_++, id});
  std::push_heap(heap_.begin(), heap_.end(), Later());
}

void TimerStore::CompactLocked() {
  std::vector<Entry> live;
  live.reserve(timers_.size());
  for (const Entry& e : heap_) {
    auto it = timers_.find(e.id);
    if (it != timers_.end() && it->second.due_ns == e.due_ns) live.push_back(e);
  }
  heap_.swap(live);
  std::make_heap(heap_.begin(), heap_.end(), Later());
}

uint64_t TimerStore::Reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t id = next_id_++;
  reserved_.insert(id);
  return id;
}

void TimerStore::Release(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  reserved_.erase(id);
}

uint64_t TimerStore::Add(double delay_ms, double interval_ms, uint32_t name_id, uint32_t handler_id,
                         const uint8_t* payload, size_t payload_len, uint64_t reserved) {
  int64_t now = NowNs();
  int64_t due = now + MsToNs(delay_ms);
  bool earlier;
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_.load()) {
      if (reserved != 0) reserved_.erase(reserved);
      refused_at_stop_.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
    if (reserved != 0) {
      // Cancelled (or released) while its event held it: no timer.
      if (reserved_.erase(reserved) == 0) return 0;
      id = reserved;
    } else {
      id = next_id_++;
    }
    Timer& t = timers_[id];
    t.due_ns = due;
    t.interval_ns = MsToNs(interval_ms);
    t.name_id = name_id;
    t.handler_id = handler_id;
    if (payload && payload_len) t.payload.assign(reinterpret_cast<const char*>(payload), payload_len);
    // The dispatcher sleeps until the earliest due time it knows of; a stale
    // top only makes it wake early and ask again, so comparing with it is safe.
    earlier = heap_.empty() || due < heap_.front().due_ns;
    PushEntryLocked(due, id);
  }
  if (earlier) {
    earlier_added_.store(true);
    if (wake_) wake_->Notify();
  }
  return id;
}

bool TimerStore::Cancel(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (timers_.erase(id) == 0) return reserved_.erase(id) != 0;
  if (heap_.size() > 64 && heap_.size() > 2 * timers_.size()) CompactLocked();
  return true;
}

int64_t TimerStore::Fire() {
  int64_t now = NowNs();
  std::lock_guard<std::mutex> lock(mu_);
  earlier_added_.store(false);
  // Pushing under our lock keeps fire order equal to due order even when two
  // threads fire at once (lock order: timers, then queue; never the reverse).
  uint64_t backlog = heap_.empty() || heap_.front().due_ns > now ? 0 : queue_->TagWaiting(kTimerTag);
  while (!heap_.empty() && heap_.front().due_ns <= now) {
    Entry e = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    heap_.pop_back();
    auto it = timers_.find(e.id);
    if (it == timers_.end() || it->second.due_ns != e.due_ns) continue;  // cancelled
    Timer& t = it->second;
    EventInput in;
    in.tag = kTimerTag;
    in.name_id = t.name_id;
    in.handler_id = t.handler_id;
    in.kind = kKindTimer;
    in.payload = reinterpret_cast<const uint8_t*>(t.payload.data());
    in.payload_len = t.payload.size();
    // A repeating timer behind a full backlog skips this period; a one-shot one always fires.
    if (t.interval_ns > 0 && backlog >= kMaxBacklog) {
      skipped_total_.fetch_add(1, std::memory_order_relaxed);
    } else {
      queue_->Push(in);
      ++backlog;
    }
    if (t.interval_ns <= 0) {
      timers_.erase(it);
      continue;
    }
    // Next period after now: a timer that fell behind skips the missed periods
    // instead of firing a burst to catch up.
    int64_t next = t.due_ns + t.interval_ns;
    if (next <= now) next += ((now - next) / t.interval_ns + 1) * t.interval_ns;
    t.due_ns = next;
    PushEntryLocked(next, e.id);
  }
  while (!heap_.empty()) {
    const Entry& top = heap_.front();
    auto it = timers_.find(top.id);
    if (it != timers_.end() && it->second.due_ns == top.due_ns) break;
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    heap_.pop_back();
  }
  if (heap_.empty()) return -1;
  int64_t wait_ns = heap_.front().due_ns - now;
  return (wait_ns + kNsPerMs - 1) / kNsPerMs;
}

size_t TimerStore::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = timers_.size();
  timers_.clear();
  heap_.clear();
  reserved_.clear();
  stopped_.store(false);
  return n;
}

size_t TimerStore::Count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timers_.size();
}

}  // namespace gsf
