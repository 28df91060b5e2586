// Claims of the tag queue: a slot takes ready runs of tags (Take), starts its events through its
// progress cell, and ends the claim (Complete). A claim spans every run queue it took from.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "clock.h"
#include "errors.h"
#include "profiler.h"
#include "tag_queue.h"
#include "wake_signal.h"

namespace gsf {

namespace {

double Finite(double v) { return std::isfinite(v) ? v : 0; }

}  // namespace

void TagQueue::QueueLocks::Lock(uint32_t mask) {
  for (uint32_t m = mask; m != 0; m &= m - 1) tq_.queues_[static_cast<size_t>(__builtin_ctz(m))].lock();
  mask_ = mask;
}

void TagQueue::QueueLocks::Unlock() {
  for (uint32_t m = mask_; m != 0; m &= m - 1) tq_.queues_[static_cast<size_t>(__builtin_ctz(m))].unlock();
  mask_ = 0;
}

uint32_t TagQueue::LockClaim(Slot& s, QueueLocks* queue_locks, std::unique_lock<SpinMutex>* slot_lock) {
  for (;;) {
    const uint32_t mask = s.queues.load(std::memory_order_acquire);
    if (mask == 0) {
      *slot_lock = std::unique_lock<SpinMutex>(s.mu);
      // Opened meanwhile: lock again in order.
      if (s.open) {
        slot_lock->unlock();
        continue;
      }
      return 0;
    }
    queue_locks->Lock(mask);
    *slot_lock = std::unique_lock<SpinMutex>(s.mu);
    // A Take still sweeping may have added a run queue meanwhile: lock again, all of them.
    if (s.queues.load(std::memory_order_relaxed) == mask) return mask;
    slot_lock->unlock();
    queue_locks->Unlock();
  }
}

int64_t TagQueue::Take(int slot, double* meta, size_t max, uint8_t* bytes, size_t bytes_len) {
  // What this thread pushed before claims it now may be its own next work; Complete reports
  // what its claim's events pushed.
  (void)TakeOwnReadyPushes();
  Slot& s = CheckedSlot(slot);
  {
    std::lock_guard<SpinMutex> slot_lock(s.mu);
    if (s.revoked) return -1;
    if (s.open) throw StateError("take: the slot still holds a claim; complete it first");
    if (s.retired) return 0;
  }
  // The sweep, from where the last claim ended: every run queue with ready tags whose lock is
  // free adds its ready runs while the claim has room, one lock at a time; then, if the claim is
  // still empty and some were busy, those again, waiting for their locks.
  uint64_t busy = 0;
  static_assert(kRunQueues <= 64, "the sweep's busy mask is one word");
  size_t n = 0, used = 0;
  const size_t from = s.cursor;
  for (size_t k = 0; k <= queue_mask_ && n < max; ++k) {
    const size_t qi = (from + k) & queue_mask_;
    RunQueue& q = queues_[qi];
    if (!q.MaybeReady()) continue;
    std::unique_lock<RunQueue> lock(q, std::try_to_lock);
    if (!lock.owns_lock()) {
      busy |= 1ull << qi;
      continue;
    }
    const int64_t added = TakeLocked(q, s, slot, meta, max, bytes, bytes_len, &n, &used);
    if (added < 0) return added;
    if (added > 0) s.cursor = (qi + 1) & queue_mask_;
  }
  for (size_t k = 0; n == 0 && busy != 0 && k <= queue_mask_; ++k) {
    const size_t qi = (from + k) & queue_mask_;
    if (!(busy & (1ull << qi))) continue;
    RunQueue& q = queues_[qi];
    std::lock_guard<RunQueue> lock(q);
    const int64_t added = TakeLocked(q, s, slot, meta, max, bytes, bytes_len, &n, &used);
    if (added < 0) return added;
    if (added > 0) s.cursor = (qi + 1) & queue_mask_;
  }
  return static_cast<int64_t>(n);
}

int64_t TagQueue::TakeLocked(RunQueue& q, Slot& s, int slot, double* meta, size_t max, uint8_t* bytes,
                             size_t bytes_len, size_t* count, size_t* used_bytes) {
  if (q.ready.empty()) return 0;
  std::lock_guard<SpinMutex> slot_lock(s.mu);
  // Revoked or retired while it swept: a timeout or a pool switch won (a retired slot keeps
  // what it claimed so far). The claim is open exactly when this sweep added to it.
  if (s.revoked) return -1;
  const size_t first = *count;
  if (s.retired || s.open != (first > 0)) return 0;
  const auto qi = static_cast<uint8_t>(&q - queues_.data());
  size_t n = first, used = *used_bytes;
  bool full = false;
  while (n < max && !full && !q.ready.empty()) {
    uint64_t tag = q.ready.front();
    TagState& st = q.tags.find(tag)->second;
    size_t first_len = q.At(st.head).payload.size();
    if (first_len > bytes_len - used) {
      if (n == 0) {
        // Never -1, which means "revoked".
        return -static_cast<int64_t>(std::max<size_t>(first_len, 2));
      }
      break;
    }
    q.PopReady();
    st.claimed_by = slot;
    s.tags.push_back(tag);
    while (n < max && st.head != kNil) {
      uint32_t idx = st.head;
      const Node& nd = q.At(idx);
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
      s.claim.push_back(Claimed{idx, nd.enqueue_ns, nd.tag, ClaimState::kTaken, qi});
      st.head = nd.next;
      if (st.head == kNil) st.tail = kNil;
      --st.count;
      ++n;
      // An event that will likely park holds its tag: the tag's later events would come back.
      if (hints_.Parks(nd.handler_id)) break;
    }
  }
  if (n > first) {
    // The claim's time is its end (after the copies of its last run queue), as close as
    // possible to when the worker starts its clock: event starts are measured from it. Each
    // event's queue age ends when its run queue's part of the claim was taken.
    const int64_t end = NowNs();
    for (size_t i = first; i < n; ++i) {
      meta[i * kTakeStride + kTakeQueueAgeMs] = static_cast<double>(std::max<int64_t>(0, end - s.claim[i].enqueue_ns)) / kNsPerMs;
    }
    if (first == 0) {
      s.open = true;
      Progress(static_cast<size_t>(slot)).store(kProgressNone);
      ProgressName(static_cast<size_t>(slot)).store(0);
    }
    s.take_ns = end;
    s.queues.fetch_or(1u << qi, std::memory_order_release);
    q.waiting -= n - first;
    q.outstanding += n - first;
  }
  *count = n;
  *used_bytes = used;
  return static_cast<int64_t>(n - first);
}

CompleteResult TagQueue::Complete(int slot, size_t count, const double* timings) {
  int64_t now = NowNs();
  const bool profile = profiler_ && profiler_->Enabled();
  // Only the two timestamps are read under the queue locks (every thread contends for them);
  // the samples are built after they are released.
  thread_local std::vector<int64_t> starts, enqueues;
  thread_local std::array<std::vector<uint32_t>, kRunQueues> requeue;
  thread_local std::vector<double> sample_timings;
  starts.clear();
  enqueues.clear();
  sample_timings.clear();
  bool made_ready = TakeOwnReadyPushes();
  {
    Slot& s = CheckedSlot(slot);
    QueueLocks locks(*this);
    std::unique_lock<SpinMutex> slot_lock;
    const uint32_t mask = LockClaim(s, &locks, &slot_lock);
    if (s.revoked) return kCompleteRevoked;
    if (mask == 0) {
      if (count == 0) return made_ready ? kCompleteMadeReady : kCompleteDone;
      throw StateError("complete: the slot holds no claim");
    }
    if (count != s.claim.size()) throw ArgumentError("complete: count differs from the claimed events");
    std::array<size_t, kRunQueues> done{};
    for (uint32_t m = mask; m != 0; m &= m - 1) requeue[static_cast<size_t>(__builtin_ctz(m))].clear();
    const int32_t running = Progress(static_cast<size_t>(slot)).load();
    for (size_t i = 0; i < count; ++i) {
      Claimed& c = s.claim[i];
      RunQueue& q = queues_[c.queue];
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
          q.FreeNode(c.node);
          ++done[c.queue];
          break;
        case ClaimState::kSkipped:
          requeue[c.queue].push_back(c.node);
          break;
        case ClaimState::kParked: {
          auto it = q.parked.find(q.At(c.node).id);
          if (it != q.parked.end()) it->second.in_claim = false;
          break;
        }
        case ClaimState::kGone:
          break;
      }
    }
    for (uint32_t m = mask; m != 0; m &= m - 1) {
      const auto qi = static_cast<size_t>(__builtin_ctz(m));
      RunQueue& q = queues_[qi];
      RequeueFrontLocked(q, requeue[qi]);
      q.outstanding -= done[qi] + requeue[qi].size();
      q.waiting += requeue[qi].size();
      q.completed_total += done[qi];
      q.throughput.Add(now / kNsPerSec, done[qi]);
    }
    for (uint64_t tag : s.tags) {
      RunQueue& q = QueueOf(tag);
      auto it = q.tags.find(tag);
      TagState& st = it->second;
      if (st.parked) {
        st.claimed_by = kParkedOwner;
      } else {
        st.claimed_by = -1;
        if (st.count > 0) {
          q.PushReady(tag);
          made_ready = true;
        } else {
          q.tags.erase(it);  // random tags are used once; keep the map small
        }
      }
    }
    s.claim.clear();
    s.tags.clear();
    s.open = false;
    s.queues.store(0, std::memory_order_relaxed);
    Progress(static_cast<size_t>(slot)).store(kProgressNone);
  }
  if (!starts.empty()) RecordSamples(sample_timings.data(), starts.data(), enqueues.data(), starts.size());
  if (made_ready) {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // as in Push
    if (wake_) wake_->Notify();
  }
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

}  // namespace gsf
