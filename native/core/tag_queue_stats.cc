// What the tag queue reports: counts of waiting and ready events, and per-second rates.
#include "clock.h"
#include "tag_queue.h"

namespace gsf {

void TagQueue::Rate::Add(int64_t now_sec, uint64_t n) {
  if (now_sec > sec) {
    prev_sec = sec;
    prev_count = count;
    sec = now_sec;
    count = 0;
  }
  count += static_cast<int64_t>(n);
}

uint64_t TagQueue::Rate::LastWholeSecond(int64_t now_sec) const {
  if (sec == now_sec - 1) return static_cast<uint64_t>(count);
  if (sec == now_sec && prev_sec == now_sec - 1) return static_cast<uint64_t>(prev_count);
  return 0;
}

uint64_t TagQueue::Waiting() const {
  std::lock_guard<SpinMutex> lock(mu_);
  return waiting_;
}

bool TagQueue::HasReady() const {
  std::lock_guard<SpinMutex> lock(mu_);
  return !ready_.empty();
}

size_t TagQueue::ReadyTags() const {
  std::lock_guard<SpinMutex> lock(mu_);
  return ready_.size();
}

size_t TagQueue::TagStateCount() const {
  std::lock_guard<SpinMutex> lock(mu_);
  return tags_.size();
}

QueueStats TagQueue::Stats() const {
  int64_t now_sec = NowNs() / kNsPerSec;
  std::lock_guard<SpinMutex> lock(mu_);
  QueueStats st;
  st.inflow_per_sec = inflow_.LastWholeSecond(now_sec);
  st.throughput_per_sec = throughput_.LastWholeSecond(now_sec);
  st.waiting = waiting_;
  st.outstanding = outstanding_;
  st.pushed_total = pushed_total_;
  st.completed_total = completed_total_;
  st.cancelled_total = cancelled_total_;
  return st;
}

}  // namespace gsf
