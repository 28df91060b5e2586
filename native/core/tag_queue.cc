#include "tag_queue.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <utility>

#include "clock.h"
#include "errors.h"
#include "profiler.h"
#include "wake_signal.h"

namespace gsf {

namespace {

// Payload buffers are recycled with their nodes; one that grew past this is
// released instead, so a burst of large payloads does not pin memory.
constexpr size_t kKeepPayloadCapacity = 64 * 1024;

double Finite(double v) { return std::isfinite(v) ? v : 0; }

}  // namespace

TagQueue::TagQueue(Profiler* profiler, WakeSignal* wake) : profiler_(profiler), wake_(wake) {
  for (size_t i = 0; i < kMaxSlots; ++i) Progress(i).store(kProgressNone);
}

TagQueue::~TagQueue() = default;

uint32_t TagQueue::AllocNode() {
  if (free_head_ != kNil) {
    uint32_t i = free_head_;
    free_head_ = At(i).next;
    return i;
  }
  if (node_count_ == kNil - 1) throw StateError("event queue is full");
  if ((node_count_ & (kChunkSize - 1)) == 0) chunks_.emplace_back(new Node[kChunkSize]);
  return node_count_++;
}

void TagQueue::FreeNode(uint32_t i) {
  Node& nd = At(i);
  if (nd.payload.capacity() > kKeepPayloadCapacity) {
    std::string().swap(nd.payload);
  } else {
    nd.payload.clear();
  }
  nd.next = free_head_;
  free_head_ = i;
}

TagQueue::Slot& TagQueue::CheckedSlot(int slot) {
  return const_cast<Slot&>(static_cast<const TagQueue*>(this)->CheckedSlot(slot));
}

const TagQueue::Slot& TagQueue::CheckedSlot(int slot) const {
  if (slot < 0 || slot >= kMaxSlots) throw ArgumentError("slot index out of range");
  const Slot& s = slots_[static_cast<size_t>(slot)];
  if (!s.used) throw StateError("slot is not registered");
  return s;
}

void TagQueue::AppendLocked(uint64_t tag, uint32_t node) {
  TagState& st = tags_[tag];
  At(node).next = kNil;
  if (st.tail == kNil) {
    st.head = node;
  } else {
    At(st.tail).next = node;
  }
  st.tail = node;
  if (++st.count == 1 && st.claimed_by == -1 && !st.parked) ready_.push_back(tag);
  ++waiting_;
}

uint64_t TagQueue::Push(const EventInput& in) {
  int64_t now = NowNs();
  // The copy is made before taking the lock; the node's old buffer comes back
  // in exchange and serves this thread's next push.
  thread_local std::string staging;
  if (in.payload && in.payload_len) {
    staging.assign(reinterpret_cast<const char*>(in.payload), in.payload_len);
  } else {
    staging.clear();
  }
  uint64_t id;
  {
    std::lock_guard<SpinMutex> lock(mu_);
    uint32_t idx = AllocNode();
    Node& nd = At(idx);
    id = in.id != 0 ? in.id : next_id_.fetch_add(1);
    nd.id = id;
    nd.tag = in.tag;
    nd.session_id = in.session_id;
    nd.enqueue_ns = now;
    nd.name_id = in.name_id;
    nd.handler_id = in.handler_id;
    nd.kind = in.kind;
    nd.payload.swap(staging);
    AppendLocked(in.tag, idx);
    ++pushed_total_;
    inflow_.Add(now / kNsPerSec, 1);
  }
  if (staging.capacity() > kKeepPayloadCapacity) std::string().swap(staging);
  if (wake_) wake_->Notify();
  return id;
}

uint64_t TagQueue::PushBatch(const EventInput* in, size_t n) {
  if (n == 0) return 0;
  int64_t now = NowNs();
  // As in Push: payloads are copied before the lock, into buffers recycled from freed nodes.
  thread_local std::vector<std::string> staging;
  if (staging.size() < n) staging.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (in[i].payload && in[i].payload_len) {
      staging[i].assign(reinterpret_cast<const char*>(in[i].payload), in[i].payload_len);
    } else {
      staging[i].clear();
    }
  }
  uint64_t first;
  {
    std::lock_guard<SpinMutex> lock(mu_);
    first = next_id_.fetch_add(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t idx = AllocNode();
      Node& nd = At(idx);
      nd.id = first + i;
      nd.tag = in[i].tag;
      nd.session_id = in[i].session_id;
      nd.enqueue_ns = now;
      nd.name_id = in[i].name_id;
      nd.handler_id = in[i].handler_id;
      nd.kind = in[i].kind;
      nd.payload.swap(staging[i]);
      AppendLocked(in[i].tag, idx);
    }
    pushed_total_ += n;
    inflow_.Add(now / kNsPerSec, n);
  }
  for (size_t i = 0; i < n; ++i) {
    if (staging[i].capacity() > kKeepPayloadCapacity) std::string().swap(staging[i]);
  }
  if (wake_) wake_->Notify();
  return first;
}

int64_t TagQueue::Take(int slot, double* meta, size_t max, uint8_t* bytes, size_t bytes_len) {
  std::lock_guard<SpinMutex> lock(mu_);
  Slot& s = CheckedSlot(slot);
  std::lock_guard<SpinMutex> slot_lock(s.mu);
  if (s.revoked) return -1;
  if (s.open) throw StateError("take: the slot still holds a claim; complete it first");
  if (s.retired) return 0;
  size_t n = 0, used = 0;
  bool full = false;
  while (n < max && !full && !ready_.empty()) {
    uint64_t tag = ready_.front();
    TagState& st = tags_.find(tag)->second;
    size_t first_len = At(st.head).payload.size();
    if (first_len > bytes_len - used) {
      if (n == 0) {
        // Never -1, which means "revoked".
        return -static_cast<int64_t>(std::max<size_t>(first_len, 2));
      }
      break;
    }
    ready_.pop_front();
    st.claimed_by = slot;
    s.tags.push_back(tag);
    while (n < max && st.head != kNil) {
      uint32_t idx = st.head;
      const Node& nd = At(idx);
      size_t len = nd.payload.size();
      if (len > bytes_len - used) {
        full = true;
        break;
      }
      if (len) std::memcpy(bytes + used, nd.payload.data(), len);
      double* m = meta + n * kTakeStride;
      m[kTakeId] = static_cast<double>(nd.id);
      m[kTakeTag] = static_cast<double>(nd.tag);
      m[kTakeNameId] = nd.name_id;
      m[kTakeHandlerId] = nd.handler_id;
      m[kTakeSessionId] = static_cast<double>(nd.session_id);
      m[kTakeKind] = nd.kind;
      m[kTakePayloadOffset] = static_cast<double>(used);
      m[kTakePayloadLength] = static_cast<double>(len);
      used += len;
      s.claim.push_back(Claimed{idx, nd.enqueue_ns, nd.tag, ClaimState::kTaken});
      st.head = nd.next;
      if (st.head == kNil) st.tail = kNil;
      --st.count;
      ++n;
    }
  }
  if (n > 0) {
    // The claim's time is its end (after the copies), as close as possible to when the worker
    // starts its clock: queue ages and event starts are measured from it.
    const int64_t end = NowNs();
    for (size_t i = 0; i < n; ++i) {
      meta[i * kTakeStride + kTakeQueueAgeMs] = static_cast<double>(std::max<int64_t>(0, end - s.claim[i].enqueue_ns)) / kNsPerMs;
    }
    s.open = true;
    s.take_ns = end;
    Progress(static_cast<size_t>(slot)).store(kProgressNone);
    ProgressName(static_cast<size_t>(slot)).store(0);
    waiting_ -= n;
    outstanding_ += n;
  }
  return static_cast<int64_t>(n);
}

CompleteResult TagQueue::Complete(int slot, size_t count, const double* timings) {
  int64_t now = NowNs();
  const bool profile = profiler_ && profiler_->Enabled();
  // Only the two timestamps are read under the queue lock (every thread contends for it);
  // the samples are built after it is released.
  thread_local std::vector<int64_t> starts, enqueues;
  thread_local std::vector<uint32_t> requeue;
  thread_local std::vector<double> sample_timings;
  starts.clear();
  enqueues.clear();
  requeue.clear();
  sample_timings.clear();
  bool made_ready = false;
  size_t done = 0;
  {
    std::lock_guard<SpinMutex> lock(mu_);
    Slot& s = CheckedSlot(slot);
    std::lock_guard<SpinMutex> slot_lock(s.mu);
    if (s.revoked) return kCompleteRevoked;
    if (!s.open) {
      if (count == 0) return kCompleteDone;
      throw StateError("complete: the slot holds no claim");
    }
    if (count != s.claim.size()) throw ArgumentError("complete: count differs from the claimed events");
    const int32_t running = Progress(static_cast<size_t>(slot)).load();
    for (size_t i = 0; i < count; ++i) {
      Claimed& c = s.claim[i];
      switch (c.state) {
        case ClaimState::kTaken:
          if (profile) {
            const double* t = timings + i * kCompleteStride;
            if (!(static_cast<uint32_t>(Finite(t[kFlags])) & kFlagNotRun)) {
              starts.push_back(StartNs(s, i, running, timings, now));
              enqueues.push_back(c.enqueue_ns);
              sample_timings.insert(sample_timings.end(), t, t + kCompleteStride);
            }
          }
          FreeNode(c.node);
          ++done;
          break;
        case ClaimState::kSkipped:
          requeue.push_back(c.node);
          break;
        case ClaimState::kParked: {
          auto it = parked_.find(At(c.node).id);
          if (it != parked_.end()) it->second.in_claim = false;
          break;
        }
        case ClaimState::kGone:
          break;
      }
    }
    RequeueFrontLocked(requeue);
    for (uint64_t tag : s.tags) {
      auto it = tags_.find(tag);
      TagState& st = it->second;
      if (st.parked) {
        st.claimed_by = kParkedOwner;
      } else {
        st.claimed_by = -1;
        if (st.count > 0) {
          ready_.push_back(tag);
          made_ready = true;
        } else {
          tags_.erase(it);  // random tags are used once; keep the map small
        }
      }
    }
    s.claim.clear();
    s.tags.clear();
    s.open = false;
    Progress(static_cast<size_t>(slot)).store(kProgressNone);
    outstanding_ -= done + requeue.size();
    waiting_ += requeue.size();
    completed_total_ += done;
    throughput_.Add(now / kNsPerSec, done);
  }
  if (!starts.empty()) RecordSamples(sample_timings.data(), starts.data(), enqueues.data(), starts.size());
  if (made_ready && wake_) wake_->Notify();
  return made_ready ? kCompleteMadeReady : kCompleteDone;
}

void TagQueue::RecordSamples(const double* timings, const int64_t* start_ns, const int64_t* enqueue_ns, size_t n) {
  // Written in place into a buffer that keeps its size across batches (no per-sample
  // construction and copy).
  thread_local std::vector<ProfileSample> samples;
  if (samples.size() < n) samples.resize(n);
  constexpr double kSecPerNs = 1.0 / static_cast<double>(kNsPerSec);
  for (size_t i = 0; i < n; ++i) {
    const double* t = timings + i * kCompleteStride;
    ProfileSample& ps = samples[i];
    double name = Finite(t[kNameId]);
    ps.name_id = name > 0 && name <= UINT32_MAX ? static_cast<uint32_t>(name) : 0;
    ps.queue_sec = static_cast<double>(std::max<int64_t>(0, start_ns[i] - enqueue_ns[i])) * kSecPerNs;
    ps.handler_sec = Finite(t[kHandlerMs]) * 0.001;
    ps.io_wait_sec = Finite(t[kIoWaitMs]) * 0.001;
    ps.rollbacks = Finite(t[kRollbacks]);
    for (size_t k = 0; k < ps.objects.size(); ++k) ps.objects[k] = Finite(t[kObjectCreateCount + k]);
  }
  profiler_->RecordBatch(samples.data(), n);
}

int64_t TagQueue::StartNs(const Slot& s, size_t i, int32_t running, const double* timings, int64_t now) const {
  if (running < 0 || i > static_cast<size_t>(running) || timings == nullptr) return now;
  double start_ms = timings[i * kCompleteStride + kStartMs];
  if (!(start_ms >= 0) || start_ms > 1e12) return now;  // also NaN
  return s.take_ns + static_cast<int64_t>(start_ms * static_cast<double>(kNsPerMs));
}

void TagQueue::RequeueFrontLocked(const std::vector<uint32_t>& nodes) {
  // Walking backwards and pushing onto the front restores each tag's order.
  for (size_t i = nodes.size(); i-- > 0;) {
    uint32_t idx = nodes[i];
    TagState& st = tags_[At(idx).tag];
    At(idx).next = st.head;
    st.head = idx;
    if (st.tail == kNil) st.tail = idx;
    ++st.count;
  }
}

void TagQueue::DropQueuedLocked(TagState& st, std::vector<DroppedEvent>* out) {
  for (uint32_t idx = st.head; idx != kNil;) {
    Node& nd = At(idx);
    uint32_t next = nd.next;
    if (out) out->push_back(DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id});
    FreeNode(idx);
    idx = next;
  }
  waiting_ -= st.count;
  cancelled_total_ += st.count;
  st.head = st.tail = kNil;
  st.count = 0;
}

void TagQueue::RemoveFromReady(uint64_t tag) {
  auto it = std::find(ready_.begin(), ready_.end(), tag);
  if (it != ready_.end()) ready_.erase(it);
}

size_t TagQueue::DropAllQueued() {
  std::lock_guard<SpinMutex> lock(mu_);
  size_t dropped = 0;
  for (auto it = tags_.begin(); it != tags_.end();) {
    dropped += it->second.count;
    DropQueuedLocked(it->second, nullptr);
    // A claimed or parked tag keeps its state until its claim or parked event ends.
    it = it->second.claimed_by == -1 && !it->second.parked ? tags_.erase(it) : std::next(it);
  }
  ready_.clear();
  return dropped;
}

}  // namespace gsf
