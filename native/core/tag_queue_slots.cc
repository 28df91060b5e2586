// Worker slots of the tag queue: registration, release of dead workers and timeouts.
#include <algorithm>
#include <array>

#include "clock.h"
#include "errors.h"
#include "profiler.h"
#include "tag_queue.h"
#include "wake_signal.h"

namespace gsf {

int TagQueue::SlotRegister(double thread_id) {
  std::lock_guard<std::mutex> reg(slots_mu_);
  for (int i = 0; i < kMaxSlots; ++i) {
    Slot& s = slots_[static_cast<size_t>(i)];
    std::lock_guard<SpinMutex> slot_lock(s.mu);
    if (s.used) continue;
    s.used = true;
    s.revoked = false;
    s.retired = false;
    s.open = false;
    s.queues.store(0);
    Progress(static_cast<size_t>(i)).store(kProgressNone);
    s.thread_id = thread_id;
    s.task_id = 0;
    s.claim.clear();
    s.tags.clear();
    return i;
  }
  throw StateError("no free worker slot");
}

void TagQueue::SlotAttachTask(int slot, double task_id) {
  Slot& s = CheckedSlot(slot);
  std::lock_guard<SpinMutex> slot_lock(s.mu);
  s.task_id = task_id;
}

size_t TagQueue::UnwindClaimLocked(uint32_t queues, Slot& s, int32_t running, bool drop_tag, uint64_t tag_to_drop,
                                   std::vector<DroppedEvent>* dropped, bool* made_ready, DroppedEvent* lost,
                                   uint8_t running_why) {
  const size_t n = s.claim.size();
  std::array<size_t, kRunQueues> gone{};
  thread_local std::array<std::vector<uint32_t>, kRunQueues> requeue;
  for (uint32_t m = queues; m != 0; m &= m - 1) requeue[static_cast<size_t>(__builtin_ctz(m))].clear();
  // The dropped tag's queued events first: client messages answered in place stay behind the
  // claimed ones that go back to the front.
  thread_local std::vector<DroppedEvent> queued_dropped;
  queued_dropped.clear();
  if (drop_tag) {
    RunQueue& q = QueueOf(tag_to_drop);
    auto it = q.tags.find(tag_to_drop);
    if (it != q.tags.end()) AnswerOrDropQueuedLocked(q, it->second, dropped ? &queued_dropped : nullptr);
  }
  for (size_t i = 0; i < n; ++i) {
    Claimed& c = s.claim[i];
    RunQueue& q = queues_[c.queue];
    switch (c.state) {
      case ClaimState::kGone:
        continue;
      case ClaimState::kParked:
        // Abandoned with the worker: AbandonParked reports it and frees the node.
        continue;
      case ClaimState::kSkipped:
        break;
      case ClaimState::kTaken:
        if (running >= 0 && i <= static_cast<size_t>(running)) {
          // Events before the current one have run to their end; the current one never will.
          if (static_cast<int32_t>(i) == running) {
            Node& nd = q.At(c.node);
            if (lost) *lost = DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id, nd.handler_id, nd.payload};
            // A client's message is answered in place: first on its tag.
            if (AnswerInPlace(nd, running_why)) {
              c.state = ClaimState::kGone;
              requeue[c.queue].push_back(c.node);
              continue;
            }
            ++q.cancelled_total;
          } else {
            ++q.completed_total;
          }
          q.FreeNode(c.node);
          c.state = ClaimState::kGone;
          ++gone[c.queue];
          continue;
        }
        break;
    }
    if (drop_tag && c.tag == tag_to_drop) {
      Node& nd = q.At(c.node);
      if (dropped) dropped->push_back(DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id, nd.handler_id, nd.payload});
      if (AnswerInPlace(nd, kAnswerCancelled)) {
        c.state = ClaimState::kGone;
        requeue[c.queue].push_back(c.node);
        continue;
      }
      ++q.cancelled_total;
      q.FreeNode(c.node);
      c.state = ClaimState::kGone;
      ++gone[c.queue];
      continue;
    }
    requeue[c.queue].push_back(c.node);
  }
  // Reported in queue order: the claimed events, then those queued behind them.
  if (dropped) dropped->insert(dropped->end(), queued_dropped.begin(), queued_dropped.end());
  size_t requeued = 0;
  for (uint32_t m = queues; m != 0; m &= m - 1) {
    const auto qi = static_cast<size_t>(__builtin_ctz(m));
    RunQueue& q = queues_[qi];
    RequeueFrontLocked(q, requeue[qi]);
    q.outstanding -= gone[qi] + requeue[qi].size();
    q.waiting += requeue[qi].size();
    requeued += requeue[qi].size();
  }
  // Requeued tags go to the front of the ready list: their events are the oldest. A tag whose
  // parked event is in this claim stays held until AbandonParked frees it.
  for (size_t i = s.tags.size(); i-- > 0;) {
    uint64_t tag = s.tags[i];
    RunQueue& q = QueueOf(tag);
    auto it = q.tags.find(tag);
    TagState& st = it->second;
    if (st.parked) {
      st.claimed_by = kParkedOwner;
      continue;
    }
    st.claimed_by = -1;
    if (st.count > 0) {
      q.PushReadyFront(tag);
      *made_ready = true;
    } else {
      q.tags.erase(it);
    }
  }
  s.claim.clear();
  s.tags.clear();
  s.open = false;
  s.queues.store(0, std::memory_order_relaxed);
  return requeued;
}

int64_t TagQueue::SlotReleaseThread(double thread_id, std::vector<AbandonedEvent>* abandoned, DroppedEvent* lost) {
  bool found = false, made_ready = false;
  size_t requeued = 0;
  {
    std::lock_guard<std::mutex> reg(slots_mu_);
    for (Slot& s : slots_) {
      {
        std::lock_guard<SpinMutex> slot_lock(s.mu);
        if (!s.used || s.thread_id != thread_id) continue;
        // Revoked first: the thread may still be ending (termination is asynchronous), and
        // from now on it claims, parks and completes nothing.
        s.revoked = true;
      }
      found = true;
      // Swapping the cell to revoked fixes which events it started, and makes any later start
      // of its fail. The cell stays revoked until the slot is registered again.
      const int32_t running = Progress(SlotIndex(s)).exchange(kProgressRevoked);
      {
        QueueLocks locks(*this);
        std::unique_lock<SpinMutex> slot_lock;
        const uint32_t mask = LockClaim(s, &locks, &slot_lock);
        if (mask != 0) requeued += UnwindClaimLocked(mask, s, running, false, 0, nullptr, &made_ready, lost, kAnswerLost);
      }
      AbandonParked(static_cast<int>(SlotIndex(s)), abandoned, &made_ready);
      std::lock_guard<SpinMutex> slot_lock(s.mu);
      s.used = false;
      s.revoked = false;
      s.task_id = 0;
    }
  }
  if (made_ready && wake_) wake_->Notify();
  return found ? static_cast<int64_t>(requeued) : -1;
}

bool TagQueue::ThreadHasSlot(double thread_id) const {
  for (const Slot& s : slots_) {
    std::lock_guard<SpinMutex> slot_lock(s.mu);
    if (s.used && s.thread_id == thread_id) return true;
  }
  return false;
}

size_t TagQueue::SlotRetireThread(double thread_id) {
  std::lock_guard<std::mutex> reg(slots_mu_);
  size_t retired = 0;
  for (Slot& s : slots_) {
    std::lock_guard<SpinMutex> slot_lock(s.mu);
    if (!s.used || s.thread_id != thread_id) continue;
    s.retired = true;
    ++retired;
  }
  return retired;
}

std::vector<RunningSlot> TagQueue::SlotsRunning() const {
  int64_t now = NowNs();
  std::vector<RunningSlot> out;
  for (int i = 0; i < kMaxSlots; ++i) {
    Slot& s = const_cast<Slot&>(slots_[static_cast<size_t>(i)]);
    QueueLocks locks(*const_cast<TagQueue*>(this));
    std::unique_lock<SpinMutex> slot_lock;
    if (const_cast<TagQueue*>(this)->LockClaim(s, &locks, &slot_lock) == 0) continue;
    // The index is read before the start: a worker writes the start first, so a racing read
    // pairs an index with its own start or the next event's (later: the event looks younger),
    // never with an older one (which would make a just-started event look long-running).
    const int32_t running = Progress(static_cast<size_t>(i)).load();
    const int32_t start_us = ProgressStartUs(static_cast<size_t>(i)).load();
    const int32_t renamed = ProgressName(static_cast<size_t>(i)).load();
    if (!s.used || s.revoked || !s.open || running < 0 || static_cast<size_t>(running) >= s.claim.size()) continue;
    const Claimed& c = s.claim[static_cast<size_t>(running)];
    if (c.state != ClaimState::kTaken) continue;  // parked: listed below
    const Node& nd = queues_[c.queue].At(c.node);
    const int64_t begin_ns = s.take_ns + static_cast<int64_t>(start_us) * 1000;
    out.push_back(RunningSlot{i, s.thread_id, s.task_id, nd.id, nd.tag,
                              renamed > 0 ? static_cast<uint32_t>(renamed) : nd.name_id, nd.session_id, nd.kind,
                              static_cast<double>(std::max<int64_t>(0, now - begin_ns)) / kNsPerMs, false});
  }
  for (const RunQueue& q : queues_) {
    std::lock_guard<SpinMutex> lock(q.mu);  // parked events only: the inbox can wait
    for (const auto& [id, p] : q.parked) {
      const Node& nd = q.At(p.node);
      const Slot& s = slots_[static_cast<size_t>(p.slot)];
      std::lock_guard<SpinMutex> slot_lock(s.mu);
      out.push_back(RunningSlot{p.slot, s.thread_id, s.task_id, id, nd.tag, p.name_id, nd.session_id, nd.kind,
                                static_cast<double>(std::max<int64_t>(0, now - p.begin_ns)) / kNsPerMs, true});
    }
  }
  return out;
}

bool TagQueue::TimeoutSlot(int slot, uint64_t event_id, std::vector<DroppedEvent>* dropped,
                           std::vector<AbandonedEvent>* abandoned, uint32_t* out_name_id, DroppedEvent* timed_out) {
  uint32_t name_id;
  bool made_ready = false;
  if (slot < 0 || slot >= kMaxSlots) throw ArgumentError("slot index out of range");
  {
    Slot& s = slots_[static_cast<size_t>(slot)];
    QueueLocks locks(*this);
    std::unique_lock<SpinMutex> slot_lock;
    const uint32_t mask = LockClaim(s, &locks, &slot_lock);
    // The watchdog may race with the worker's exit: a freed slot is "no longer running there".
    int32_t running = Progress(static_cast<size_t>(slot)).load();
    if (mask == 0 || !s.used || s.revoked || !s.open || running < 0 ||
        static_cast<size_t>(running) >= s.claim.size()) {
      return false;
    }
    const Claimed& c = s.claim[static_cast<size_t>(running)];
    if (c.state != ClaimState::kTaken) return false;
    const Node& nd = queues_[c.queue].At(c.node);
    if (nd.id != event_id) return false;
    const int32_t renamed = ProgressName(static_cast<size_t>(slot)).load();
    // The worker may be starting the next event right now: whichever swaps the cell first wins.
    if (!Progress(static_cast<size_t>(slot)).compare_exchange_strong(running, kProgressRevoked)) return false;
    name_id = renamed > 0 ? static_cast<uint32_t>(renamed) : nd.name_id;
    const uint64_t tag = nd.tag;
    if (timed_out) *timed_out = DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id, nd.handler_id, nd.payload};
    // Revoked until the worker's thread is released: whatever the stuck
    // handler does later must not touch the queue again.
    s.revoked = true;
    UnwindClaimLocked(mask, s, running, true, tag, dropped, &made_ready, nullptr, kAnswerTimedOut);
  }
  // The worker is ended: its parked events never finish.
  AbandonParked(slot, abandoned, &made_ready);
  if (out_name_id) *out_name_id = name_id;
  if (profiler_) profiler_->RecordTimeout(name_id);
  if (made_ready && wake_) wake_->Notify();
  return true;
}

}  // namespace gsf
