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

uint64_t TagQueue::Waiting() const { return Stats().waiting; }

uint64_t TagQueue::TagWaiting(uint64_t tag) {
  RunQueue& q = QueueOf(tag);
  std::lock_guard<RunQueue> lock(q);  // files the inbox first: it holds earlier pushes
  auto it = q.tags.find(tag);
  return it == q.tags.end() ? 0 : it->second.count;
}

bool TagQueue::HasReady() const {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // see Push
  for (const RunQueue& q : queues_) {
    if (q.MaybeReady()) return true;
  }
  return false;
}

size_t TagQueue::ReadyTags() const {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // see Push
  size_t ready = 0;
  // Events not filed yet are counted as if each made a tag ready: a worker that asks before it
  // sleeps then claims, which files them.
  for (const RunQueue& q : queues_) ready += q.ready_count.load(std::memory_order_relaxed) + q.inbox.Count();
  return ready;
}

size_t TagQueue::TagStateCount() const {
  size_t count = 0;
  for (const RunQueue& q : queues_) {
    std::lock_guard<RunQueue> lock(const_cast<RunQueue&>(q));  // filing its inbox may add tags
    count += q.tags.size();
  }
  return count;
}

QueueStats TagQueue::Stats() const {
  int64_t now_sec = NowNs() / kNsPerSec;
  QueueStats st;
  // Every run queue's lock at once (in order; nothing else holds two): an event that one run
  // queue's event pushed into another is counted there or in the first, never in neither.
  // Locking files each inbox, so its events count as waiting and pushed.
  std::array<std::unique_lock<RunQueue>, kRunQueues> locks;
  for (size_t i = 0; i < kRunQueues; ++i) locks[i] = std::unique_lock<RunQueue>(const_cast<RunQueue&>(queues_[i]));
  for (const RunQueue& q : queues_) {
    st.inflow_per_sec += q.inflow.LastWholeSecond(now_sec);
    st.throughput_per_sec += q.throughput.LastWholeSecond(now_sec);
    st.waiting += q.waiting;
    st.outstanding += q.outstanding;
    st.pushed_total += q.pushed_total;
    st.completed_total += q.completed_total;
    st.cancelled_total += q.cancelled_total;
  }
  return st;
}

}  // namespace gsf
