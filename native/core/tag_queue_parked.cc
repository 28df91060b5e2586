// Parked events: an event whose handler awaits keeps its tag busy but frees its worker, which
// goes on with other tags' events. The event ends later with FinishParked, or is timed out or
// abandoned (its worker was ended) while it waits.
#include <algorithm>

#include "clock.h"
#include "errors.h"
#include "profiler.h"
#include "tag_queue.h"
#include "wake_signal.h"

namespace gsf {

bool TagQueue::Park(int slot, size_t index, uint32_t name_id) {
  std::lock_guard<SpinMutex> lock(mu_);
  Slot& s = CheckedSlot(slot);
  std::lock_guard<SpinMutex> slot_lock(s.mu);
  if (s.revoked || !s.open) return false;
  const int32_t running = Progress(static_cast<size_t>(slot)).load();
  if (running < 0 || static_cast<size_t>(running) != index || index >= s.claim.size()) return false;
  Claimed& c = s.claim[index];
  if (c.state != ClaimState::kTaken) return false;
  c.state = ClaimState::kParked;
  const int32_t start_us = ProgressStartUs(static_cast<size_t>(slot)).load();
  const Node& nd = At(c.node);
  parked_[nd.id] = ParkedEvent{c.node, slot, true, index, c.enqueue_ns,
                               s.take_ns + static_cast<int64_t>(start_us) * 1000, name_id ? name_id : nd.name_id};
  tags_[c.tag].parked = true;
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
    std::lock_guard<SpinMutex> lock(mu_);
    auto it = parked_.find(event_id);
    if (it == parked_.end()) return kCompleteRevoked;
    const ParkedEvent p = it->second;
    parked_.erase(it);
    begin_ns = p.begin_ns;
    enqueue_ns = p.enqueue_ns;
    const uint64_t tag = At(p.node).tag;
    FreeNode(p.node);
    if (p.in_claim) {
      // Its claim is still open: the tag stays claimed, and Complete frees it.
      Slot& s = slots_[static_cast<size_t>(p.slot)];
      std::lock_guard<SpinMutex> slot_lock(s.mu);
      s.claim[p.index].state = ClaimState::kGone;
      tags_[tag].parked = false;
    } else {
      ReleaseParkedTagLocked(tag, &made_ready);
    }
    --outstanding_;
    ++completed_total_;
    throughput_.Add(now / kNsPerSec, 1);
  }
  if (profile) RecordSamples(timing, &begin_ns, &enqueue_ns, 1);
  if (made_ready && wake_) wake_->Notify();
  return made_ready ? kCompleteMadeReady : kCompleteDone;
}

bool TagQueue::SettleParked(uint64_t event_id) {
  std::lock_guard<SpinMutex> lock(mu_);
  auto it = parked_.find(event_id);
  if (it == parked_.end()) return false;
  it->second.settling = true;
  return true;
}

void TagQueue::RenameParked(uint64_t event_id, uint32_t name_id) {
  std::lock_guard<SpinMutex> lock(mu_);
  auto it = parked_.find(event_id);
  if (it != parked_.end() && name_id != 0) it->second.name_id = name_id;
}

bool TagQueue::TimeoutParked(uint64_t event_id, std::vector<DroppedEvent>* dropped, uint32_t* name_id) {
  uint32_t name;
  {
    std::lock_guard<SpinMutex> lock(mu_);
    auto it = parked_.find(event_id);
    // A settling event is finishing on its worker: too late to time it out.
    if (it == parked_.end() || it->second.settling) return false;
    const ParkedEvent p = it->second;
    parked_.erase(it);
    name = p.name_id;
    const uint64_t tag = At(p.node).tag;
    FreeNode(p.node);
    --outstanding_;
    ++cancelled_total_;
    TagState& st = tags_[tag];
    st.parked = false;
    if (p.in_claim) {
      // The claim is still open: its skipped events of the tag are cancelled with the tag.
      Slot& s = slots_[static_cast<size_t>(p.slot)];
      std::lock_guard<SpinMutex> slot_lock(s.mu);
      s.claim[p.index].state = ClaimState::kGone;
      for (size_t i = p.index + 1; i < s.claim.size(); ++i) {
        Claimed& c = s.claim[i];
        if (c.tag != tag || c.state != ClaimState::kSkipped) continue;
        const Node& nd = At(c.node);
        if (dropped) dropped->push_back(DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id});
        FreeNode(c.node);
        c.state = ClaimState::kGone;
        --outstanding_;
        ++cancelled_total_;
      }
      DropQueuedLocked(st, dropped);
    } else {
      DropQueuedLocked(st, dropped);
      tags_.erase(tag);
    }
  }
  if (name_id) *name_id = name;
  if (profiler_) profiler_->RecordTimeout(name);
  return true;
}

size_t TagQueue::ParkedCount() const {
  std::lock_guard<SpinMutex> lock(mu_);
  return parked_.size();
}

std::vector<uint64_t> TagQueue::ParkedOf(int slot) const {
  std::vector<uint64_t> out;
  std::lock_guard<SpinMutex> lock(mu_);
  for (const auto& [id, p] : parked_) {
    if (p.slot == slot) out.push_back(id);
  }
  return out;
}

void TagQueue::AbandonParkedLocked(int slot, std::vector<AbandonedEvent>* abandoned, bool* made_ready) {
  for (auto it = parked_.begin(); it != parked_.end();) {
    const ParkedEvent& p = it->second;
    if (p.slot != slot) {
      ++it;
      continue;
    }
    const Node& nd = At(p.node);
    if (abandoned) abandoned->push_back(AbandonedEvent{nd.id, nd.tag, p.name_id, nd.session_id});
    const uint64_t tag = nd.tag;
    FreeNode(p.node);
    --outstanding_;
    ++cancelled_total_;
    it = parked_.erase(it);
    ReleaseParkedTagLocked(tag, made_ready);
  }
}

void TagQueue::ReleaseParkedTagLocked(uint64_t tag, bool* made_ready) {
  auto it = tags_.find(tag);
  if (it == tags_.end()) return;
  TagState& st = it->second;
  st.parked = false;
  if (st.claimed_by >= 0) return;  // still in an open claim: Complete frees it
  st.claimed_by = -1;
  if (st.count > 0) {
    ready_.push_back(tag);
    *made_ready = true;
  } else {
    tags_.erase(it);
  }
}

}  // namespace gsf
