// Parked events: an event whose handler awaits keeps its tag busy but frees its worker, which
// goes on with other tags' events. The event ends later with FinishParked, or is timed out or
// abandoned (its worker was ended) while it waits. A parked event stays in its tag's run queue;
// parked_queue_ tells the calls that name only the event which one that is.
#include <algorithm>

#include "clock.h"
#include "errors.h"
#include "profiler.h"
#include "tag_queue.h"
#include "wake_signal.h"

namespace gsf {

size_t TagQueue::ParkedQueue(uint64_t event_id) const {
  std::lock_guard<SpinMutex> lock(parked_mu_);
  auto it = parked_queue_.find(event_id);
  return it == parked_queue_.end() ? kRunQueues : it->second;
}

void TagQueue::ForgetParked(uint64_t event_id) {
  std::lock_guard<SpinMutex> lock(parked_mu_);
  parked_queue_.erase(event_id);
}

bool TagQueue::Park(int slot, size_t index, uint32_t name_id) {
  Slot& s = CheckedSlot(slot);
  QueueLocks locks(*this);
  std::unique_lock<SpinMutex> slot_lock;
  if (LockClaim(s, &locks, &slot_lock) == 0 || s.revoked || !s.open) return false;
  const int32_t running = Progress(static_cast<size_t>(slot)).load();
  if (running < 0 || static_cast<size_t>(running) != index || index >= s.claim.size()) return false;
  Claimed& c = s.claim[index];
  if (c.state != ClaimState::kTaken) return false;
  RunQueue& q = queues_[c.queue];
  c.state = ClaimState::kParked;
  const int32_t start_us = ProgressStartUs(static_cast<size_t>(slot)).load();
  const Node& nd = q.At(c.node);
  q.parked[nd.id] = ParkedEvent{c.node, slot, true, index, c.enqueue_ns,
                                s.take_ns + static_cast<int64_t>(start_us) * 1000, name_id ? name_id : nd.name_id};
  {
    std::lock_guard<SpinMutex> parked_lock(parked_mu_);
    parked_queue_[nd.id] = c.queue;
  }
  q.tags[c.tag].parked = true;
  // The tag's later events of this claim wait for the parked one: they go back to the queue.
  for (size_t i = index + 1; i < s.claim.size(); ++i) {
    if (s.claim[i].tag == c.tag && s.claim[i].state == ClaimState::kTaken) s.claim[i].state = ClaimState::kSkipped;
  }
  return true;
}

CompleteResult TagQueue::FinishParked(uint64_t event_id, const double* timing) {
  const int64_t now = NowNs();
  const bool profile = profiler_ && profiler_->Enabled() && timing != nullptr &&
                       !(static_cast<uint32_t>(timing[kFlags]) & kFlagNotRun);
  int64_t begin_ns = 0, enqueue_ns = 0;
  bool made_ready = false;
  {
    const size_t qi = ParkedQueue(event_id);
    if (qi == kRunQueues) return kCompleteRevoked;
    RunQueue& q = queues_[qi];
    std::lock_guard<RunQueue> lock(q);
    auto it = q.parked.find(event_id);
    if (it == q.parked.end()) return kCompleteRevoked;
    const ParkedEvent p = it->second;
    q.parked.erase(it);
    ForgetParked(event_id);
    begin_ns = p.begin_ns;
    enqueue_ns = p.enqueue_ns;
    const uint64_t tag = q.At(p.node).tag;
    q.FreeNode(p.node);
    if (p.in_claim) {
      // Its claim is still open: the tag stays claimed, and Complete frees it.
      Slot& s = slots_[static_cast<size_t>(p.slot)];
      std::lock_guard<SpinMutex> slot_lock(s.mu);
      s.claim[p.index].state = ClaimState::kGone;
      q.tags[tag].parked = false;
    } else {
      ReleaseParkedTagLocked(q, tag, &made_ready);
    }
    --q.outstanding;
    ++q.completed_total;
    q.throughput.Add(now / kNsPerSec, 1);
  }
  if (profile) RecordSamples(timing, &begin_ns, &enqueue_ns, 1);
  if (made_ready) {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // as in Push
    if (wake_) wake_->Notify();
  }
  return made_ready ? kCompleteMadeReady : kCompleteDone;
}

bool TagQueue::SettleParked(uint64_t event_id) {
  const size_t qi = ParkedQueue(event_id);
  if (qi == kRunQueues) return false;
  RunQueue& q = queues_[qi];
  std::lock_guard<RunQueue> lock(q);
  auto it = q.parked.find(event_id);
  if (it == q.parked.end()) return false;
  it->second.settling = true;
  return true;
}

void TagQueue::RenameParked(uint64_t event_id, uint32_t name_id) {
  const size_t qi = ParkedQueue(event_id);
  if (qi == kRunQueues) return;
  RunQueue& q = queues_[qi];
  std::lock_guard<RunQueue> lock(q);
  auto it = q.parked.find(event_id);
  if (it != q.parked.end() && name_id != 0) it->second.name_id = name_id;
}

bool TagQueue::TimeoutParked(uint64_t event_id, std::vector<DroppedEvent>* dropped, uint32_t* name_id,
                             DroppedEvent* timed_out) {
  uint32_t name;
  bool made_ready = false;
  {
    const size_t qi = ParkedQueue(event_id);
    if (qi == kRunQueues) return false;
    RunQueue& q = queues_[qi];
    std::lock_guard<RunQueue> lock(q);
    auto it = q.parked.find(event_id);
    // A settling event is finishing on its worker: too late to time it out.
    if (it == q.parked.end() || it->second.settling) return false;
    const ParkedEvent p = it->second;
    q.parked.erase(it);
    ForgetParked(event_id);
    name = p.name_id;
    Node& parked = q.At(p.node);
    const uint64_t tag = parked.tag;
    if (timed_out) {
      *timed_out = DroppedEvent{parked.id, parked.tag, parked.name_id, parked.session_id, parked.handler_id, parked.payload};
    }
    TagState& st = q.tags[tag];
    st.parked = false;
    // Its tag's queued events are cancelled; client messages among them, and the event itself if
    // it is one, are answered in place, first on the tag (the event, then the claim's skipped
    // events of the tag, then those queued).
    std::vector<DroppedEvent> queued;
    AnswerOrDropQueuedLocked(q, st, dropped ? &queued : nullptr);
    std::vector<uint32_t> front;
    --q.outstanding;
    if (AnswerInPlace(parked, kAnswerTimedOut)) {
      front.push_back(p.node);
    } else {
      q.FreeNode(p.node);
      ++q.cancelled_total;
    }
    if (p.in_claim) {
      // The claim is still open: its skipped events of the tag are cancelled with the tag.
      Slot& s = slots_[static_cast<size_t>(p.slot)];
      std::lock_guard<SpinMutex> slot_lock(s.mu);
      s.claim[p.index].state = ClaimState::kGone;
      for (size_t i = p.index + 1; i < s.claim.size(); ++i) {
        Claimed& c = s.claim[i];
        if (c.tag != tag || c.state != ClaimState::kSkipped) continue;
        Node& nd = q.At(c.node);
        if (dropped) dropped->push_back(DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id, nd.handler_id, nd.payload});
        c.state = ClaimState::kGone;
        --q.outstanding;
        if (AnswerInPlace(nd, kAnswerCancelled)) {
          front.push_back(c.node);
          continue;
        }
        q.FreeNode(c.node);
        ++q.cancelled_total;
      }
    }
    if (dropped) dropped->insert(dropped->end(), queued.begin(), queued.end());
    RequeueFrontLocked(q, front);
    q.waiting += front.size();
    // In an open claim, its Complete frees the tag; else it is free now.
    if (!p.in_claim) {
      st.claimed_by = -1;
      if (st.count > 0) {
        q.PushReadyFront(tag);
        made_ready = true;
      } else {
        q.tags.erase(tag);
      }
    }
  }
  if (name_id) *name_id = name;
  if (profiler_) profiler_->RecordTimeout(name);
  if (made_ready && wake_) wake_->Notify();
  return true;
}

size_t TagQueue::ParkedCount() const {
  std::lock_guard<SpinMutex> lock(parked_mu_);
  return parked_queue_.size();
}

std::vector<uint64_t> TagQueue::ParkedOf(int slot) const {
  std::vector<uint64_t> out;
  for (const RunQueue& q : queues_) {
    std::lock_guard<SpinMutex> lock(q.mu);  // parked events only: the inbox can wait
    for (const auto& [id, p] : q.parked) {
      if (p.slot == slot) out.push_back(id);
    }
  }
  return out;
}

void TagQueue::AbandonParked(int slot, std::vector<AbandonedEvent>* abandoned, bool* made_ready) {
  for (RunQueue& q : queues_) {
    std::lock_guard<RunQueue> lock(q);
    for (auto it = q.parked.begin(); it != q.parked.end();) {
      const ParkedEvent& p = it->second;
      if (p.slot != slot) {
        ++it;
        continue;
      }
      Node& nd = q.At(p.node);
      if (abandoned) abandoned->push_back(AbandonedEvent{nd.id, nd.tag, p.name_id, nd.session_id, nd.handler_id, nd.payload});
      const uint64_t tag = nd.tag;
      const uint32_t node = p.node;
      ForgetParked(nd.id);
      --q.outstanding;
      // A client's message is answered in place, first on its tag.
      if (AnswerInPlace(nd, kAnswerAbandoned)) {
        RequeueFrontLocked(q, {node});
        ++q.waiting;
      } else {
        q.FreeNode(node);
        ++q.cancelled_total;
      }
      it = q.parked.erase(it);
      ReleaseParkedTagLocked(q, tag, made_ready);
    }
  }
}

void TagQueue::ReleaseParkedTagLocked(RunQueue& q, uint64_t tag, bool* made_ready) {
  auto it = q.tags.find(tag);
  if (it == q.tags.end()) return;
  TagState& st = it->second;
  st.parked = false;
  if (st.claimed_by >= 0) return;  // still in an open claim: Complete frees it
  st.claimed_by = -1;
  if (st.count > 0) {
    q.PushReady(tag);
    *made_ready = true;
  } else {
    q.tags.erase(it);
  }
}

}  // namespace gsf
