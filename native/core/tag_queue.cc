#include "tag_queue.h"

#include <algorithm>
#include <array>
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
// An inbox's payload buffer that grew past this is released once its events are filed.
constexpr size_t kKeepInboxBytes = 1024 * 1024;

}  // namespace

// Set when a push on this thread made a tag ready (see TakeOwnReadyPushes).
thread_local bool t_pushed_ready = false;

TagQueue::TagQueue(Profiler* profiler, WakeSignal* wake, size_t run_queues)
    : profiler_(profiler), wake_(wake), queue_mask_(run_queues - 1) {
  if (run_queues == 0 || run_queues > kRunQueues || (run_queues & queue_mask_) != 0) {
    throw ArgumentError("run_queues must be a power of two up to kRunQueues");
  }
  for (size_t i = 0; i < kMaxSlots; ++i) {
    Progress(i).store(kProgressNone);
    // Slots start their sweeps spread over the run queues.
    slots_[i].cursor = (i * 7) & queue_mask_;
  }
}

TagQueue::~TagQueue() = default;

bool TagQueue::TakeOwnReadyPushes() {
  const bool pushed = t_pushed_ready;
  t_pushed_ready = false;
  return pushed;
}

uint32_t TagQueue::RunQueue::AllocNode() {
  if (free_head != kNil) {
    uint32_t i = free_head;
    free_head = At(i).next;
    return i;
  }
  if (node_count == kNil - 1) throw StateError("event queue is full");
  if ((node_count & (kChunkSize - 1)) == 0) chunks.emplace_back(new Node[kChunkSize]);
  return node_count++;
}

void TagQueue::RunQueue::FreeNode(uint32_t i) {
  Node& nd = At(i);
  if (nd.payload.capacity() > kKeepPayloadCapacity) {
    std::string().swap(nd.payload);
  } else {
    nd.payload.clear();
  }
  nd.next = free_head;
  free_head = i;
}

TagQueue::Slot& TagQueue::CheckedSlot(int slot) {
  return const_cast<Slot&>(static_cast<const TagQueue*>(this)->CheckedSlot(slot));
}

const TagQueue::Slot& TagQueue::CheckedSlot(int slot) const {
  if (slot < 0 || slot >= kMaxSlots) throw ArgumentError("slot index out of range");
  const Slot& s = slots_[static_cast<size_t>(slot)];
  std::lock_guard<SpinMutex> slot_lock(s.mu);
  if (!s.used) throw StateError("slot is not registered");
  return s;
}

bool TagQueue::RunQueue::Append(uint64_t tag, uint32_t node) {
  TagState& st = tags[tag];
  At(node).next = kNil;
  if (st.tail == kNil) {
    st.head = node;
  } else {
    At(st.tail).next = node;
  }
  st.tail = node;
  ++waiting;
  if (++st.count == 1 && st.claimed_by == -1 && !st.parked) {
    PushReady(tag);
    return true;
  }
  return false;
}

void TagQueue::AppendLocked(RunQueue& q, uint64_t tag, uint32_t node) {
  if (q.Append(tag, node)) t_pushed_ready = true;
}

void TagQueue::RunQueue::lock() {
  mu.lock();
  try {
    FileInbox();
  } catch (...) {
    mu.unlock();
    throw;
  }
}

bool TagQueue::RunQueue::try_lock() {
  if (!mu.try_lock()) return false;
  try {
    FileInbox();
  } catch (...) {
    mu.unlock();
    throw;
  }
  return true;
}

void TagQueue::RunQueue::FileInbox() {
  if (inbox.Count() == 0) return;
  inbox.TakeAll(&filing, &filing_bytes);
  size_t offset = 0;
  for (const InboxEvent& ev : filing) {
    const uint32_t idx = AllocNode();
    Node& nd = At(idx);
    nd.id = ev.id;
    nd.tag = ev.tag;
    nd.session_id = ev.session_id;
    nd.enqueue_ns = ev.enqueue_ns;
    nd.name_id = ev.name_id;
    nd.handler_id = ev.handler_id;
    nd.kind = ev.kind;
    nd.payload.assign(filing_bytes.data() + offset, ev.payload_len);
    offset += ev.payload_len;
    Append(ev.tag, idx);
  }
  pushed_total += filing.size();
  if (!filing.empty()) inflow.Add(filing.front().enqueue_ns / kNsPerSec, filing.size());
  // The buffers go back to the inbox at the next filing; a burst's large one is let go instead.
  if (filing_bytes.capacity() > kKeepInboxBytes) std::string().swap(filing_bytes);
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
  const uint64_t id = in.id != 0 ? in.id : next_id_.fetch_add(1, std::memory_order_relaxed);
  RunQueue& q = QueueOf(in.tag);
  {
    std::lock_guard<RunQueue> lock(q);  // files the inbox first: it holds earlier pushes
    uint32_t idx = q.AllocNode();
    Node& nd = q.At(idx);
    nd.id = id;
    nd.tag = in.tag;
    nd.session_id = in.session_id;
    nd.enqueue_ns = now;
    nd.name_id = in.name_id;
    nd.handler_id = in.handler_id;
    nd.kind = in.kind;
    nd.payload.swap(staging);
    AppendLocked(q, in.tag, idx);
    ++q.pushed_total;
    q.inflow.Add(now / kNsPerSec, 1);
  }
  if (staging.capacity() > kKeepPayloadCapacity) std::string().swap(staging);
  // Orders the push before the caller's look at the idle workers (wake.ts): a worker announces
  // itself idle, then asks ReadyTags, which fences too.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (wake_) wake_->Notify();
  return id;
}

uint64_t TagQueue::PushBatch(const EventInput* in, size_t n, uint64_t first_id) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; ++i) {
    if (in[i].payload_len > UINT32_MAX) throw ArgumentError("pushBatch: a payload is larger than 4 GiB");
  }
  const int64_t now = NowNs();
  // Ids reserved before (ReserveIds) or drawn now.
  const uint64_t first = first_id != 0 ? first_id : next_id_.fetch_add(n, std::memory_order_relaxed);
  // Events are grouped by run queue, so each inbox is taken once per batch. The grouping is
  // stable: a tag's events, all in one run queue, keep their order; events of different tags
  // never had one. They are filed into their tags by whoever locks the run queue next.
  thread_local std::vector<uint8_t> queue_of;
  thread_local std::vector<uint32_t> order;
  queue_of.resize(n);
  order.resize(n);
  std::array<uint32_t, kRunQueues + 1> begin{};
  for (size_t i = 0; i < n; ++i) {
    queue_of[i] = static_cast<uint8_t>(QueueIndex(in[i].tag));
    ++begin[queue_of[i] + 1];
  }
  for (size_t k = 1; k <= kRunQueues; ++k) begin[k] += begin[k - 1];
  std::array<uint32_t, kRunQueues> fill{};
  std::copy(begin.begin(), begin.begin() + kRunQueues, fill.begin());
  for (size_t i = 0; i < n; ++i) order[fill[queue_of[i]]++] = static_cast<uint32_t>(i);
  for (size_t qi = 0; qi <= queue_mask_; ++qi) {
    if (begin[qi] == begin[qi + 1]) continue;
    PushInbox::Writer inbox(queues_[qi].inbox);
    for (uint32_t k = begin[qi]; k < begin[qi + 1]; ++k) {
      const EventInput& e = in[order[k]];
      const uint8_t* payload = e.payload_len != 0 ? e.payload : nullptr;
      inbox.Add(InboxEvent{first + order[k], e.tag, e.session_id, now, e.name_id, e.handler_id,
                           payload != nullptr ? static_cast<uint32_t>(e.payload_len) : 0u, e.kind},
                payload);
    }
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);  // as in Push
  if (wake_) wake_->Notify();
  return first;
}

void TagQueue::RequeueFrontLocked(RunQueue& q, const std::vector<uint32_t>& nodes) {
  // Walking backwards and pushing onto the front restores each tag's order.
  for (size_t i = nodes.size(); i-- > 0;) {
    uint32_t idx = nodes[i];
    TagState& st = q.tags[q.At(idx).tag];
    q.At(idx).next = st.head;
    st.head = idx;
    if (st.tail == kNil) st.tail = idx;
    ++st.count;
  }
}

void TagQueue::DropQueuedLocked(RunQueue& q, TagState& st, std::vector<DroppedEvent>* out) {
  for (uint32_t idx = st.head; idx != kNil;) {
    Node& nd = q.At(idx);
    uint32_t next = nd.next;
    if (out) out->push_back(DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id, nd.handler_id, nd.payload});
    q.FreeNode(idx);
    idx = next;
  }
  q.waiting -= st.count;
  q.cancelled_total += st.count;
  st.head = st.tail = kNil;
  st.count = 0;
}

void TagQueue::SetAnsweredMessages(uint32_t handler_id, uint32_t answer_name_id, uint32_t keep_name_id, bool on_timeout) {
  answer_name_.store(answer_name_id);
  keep_name_.store(keep_name_id);
  answer_timeouts_.store(on_timeout);
  answer_handler_.store(handler_id);
}

bool TagQueue::AnswerInPlace(Node& nd, uint8_t why) {
  const uint32_t handler = answer_handler_.load(std::memory_order_relaxed);
  if (handler == 0 || nd.handler_id != handler) return false;
  if ((why == kAnswerTimedOut || why == kAnswerCancelled) && !answer_timeouts_.load(std::memory_order_relaxed)) return false;
  const uint32_t answer = answer_name_.load(std::memory_order_relaxed);
  if (nd.name_id != answer && nd.name_id != keep_name_.load(std::memory_order_relaxed)) {
    nd.name_id = answer;
    nd.payload.insert(nd.payload.begin(), static_cast<char>(why));
  }
  nd.id = next_id_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void TagQueue::AnswerOrDropQueuedLocked(RunQueue& q, TagState& st, std::vector<DroppedEvent>* out) {
  uint32_t head = kNil, tail = kNil, kept = 0;
  for (uint32_t idx = st.head; idx != kNil;) {
    Node& nd = q.At(idx);
    const uint32_t next = nd.next;
    if (out) out->push_back(DroppedEvent{nd.id, nd.tag, nd.name_id, nd.session_id, nd.handler_id, nd.payload});
    if (AnswerInPlace(nd, kAnswerCancelled)) {
      nd.next = kNil;
      if (tail == kNil) {
        head = idx;
      } else {
        q.At(tail).next = idx;
      }
      tail = idx;
      ++kept;
    } else {
      q.FreeNode(idx);
    }
    idx = next;
  }
  q.waiting -= st.count - kept;
  q.cancelled_total += st.count - kept;
  st.head = head;
  st.tail = tail;
  st.count = kept;
}

size_t TagQueue::DropAllQueued() {
  size_t dropped = 0;
  for (RunQueue& q : queues_) {
    std::lock_guard<RunQueue> lock(q);
    for (auto it = q.tags.begin(); it != q.tags.end();) {
      dropped += it->second.count;
      DropQueuedLocked(q, it->second, nullptr);
      // A claimed or parked tag keeps its state until its claim or parked event ends.
      it = it->second.claimed_by == -1 && !it->second.parked ? q.tags.erase(it) : std::next(it);
    }
    q.ClearReady();
  }
  return dropped;
}

}  // namespace gsf
