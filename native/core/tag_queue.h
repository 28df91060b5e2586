// Tag-ordered event queue and the worker slots that claim from it (SPEC 6.2).
#pragma once

#include <array>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "park_hints.h"
#include "push_inbox.h"
#include "queue_layout.h"
#include "sparing_map.h"
#include "spin_mutex.h"

namespace gsf {

class Profiler;
class WakeSignal;

/** What a producer hands to Push; the payload is copied. */
struct EventInput {
  /** An id from ReserveId, or 0 for a new one. */
  uint64_t id = 0;
  uint64_t tag = 0;
  uint32_t name_id = 0;
  uint32_t handler_id = 0;
  uint64_t session_id = 0;
  uint8_t kind = 0;
  const uint8_t* payload = nullptr;
  size_t payload_len = 0;
};

struct DroppedEvent {
  uint64_t id, tag;
  uint32_t name_id;
  uint64_t session_id;
  uint32_t handler_id = 0;  // its handler and payload: what a host kept for it is released (native timers)
  std::string payload;
};

struct RunningSlot {
  /** The slot running the event, or the slot that parked it. */
  int32_t slot;
  double thread_id;
  double task_id;
  uint64_t event_id, tag;
  uint32_t name_id;
  uint64_t session_id;
  uint8_t kind;
  double elapsed_ms;
  /** Parked: the event awaits (holds its tag, not its thread). */
  bool parked = false;
};

/** A parked event that will never finish: its worker was ended while it awaited. */
struct AbandonedEvent {
  uint64_t id, tag;
  uint32_t name_id;
  uint64_t session_id;
  uint32_t handler_id = 0;  // its handler and payload: a client's request is answered (network events)
  std::string payload;
};

struct QueueStats {
  uint64_t inflow_per_sec = 0, throughput_per_sec = 0;
  uint64_t waiting = 0, outstanding = 0;
  uint64_t pushed_total = 0, completed_total = 0, cancelled_total = 0;
};

/**
 * Events of one tag run strictly in push order and never on two slots at once;
 * different tags run in parallel. A slot claims whole runs of a tag's queued
 * events with Take, marks each one started (in its progress cell, or with Begin)
 * and releases the claim with Complete.
 *
 * The queue is split into run queues, each with its own lock, nodes, tags and ready list;
 * a tag belongs to the run queue its hash picks, so its events stay in push order and a push
 * locks only that run queue (no lock is shared by all pushes). A batch push only copies its
 * events into each run queue's inbox; whoever locks the run queue next files them (push_inbox.h). A claim sweeps the run queues
 * from where the slot's last claim ended: it takes whole runs from the first whose lock is free
 * and that has ready tags, then, while it has room, from the next free ones, one lock at a
 * time. A busy run queue is passed over, so threads spread over the run queues instead of
 * waiting on one another, and a claim is as large with one thread as with one run queue.
 * Critical sections are short and batched, so the locks spin before they yield.
 */
class TagQueue {
 public:
  static constexpr int kMaxSlots = 256;

  /**
   * `run_queues` (a power of two up to kRunQueues): how many run queues tags are spread over.
   * One gives a single ready list, in which claims take tags in the order they became ready.
   */
  TagQueue(Profiler* profiler, WakeSignal* wake, size_t run_queues = kRunQueues);
  ~TagQueue();
  TagQueue(const TagQueue&) = delete;
  TagQueue& operator=(const TagQueue&) = delete;

  /** Queues an event; returns its process-unique id (>= 1), `in.id` when one was reserved. */
  uint64_t Push(const EventInput& in);
  /**
   * True, once, if a push on this thread made a tag ready since the last call or Take: the
   * thread's Complete then reports kCompleteMadeReady, so its worker wakes another one for what a
   * native plugin invoked during the claim. A caller that wakes workers itself after pushing
   * clears it with this.
   */
  static bool TakeOwnReadyPushes();
  /** Why a client's message is answered in its place: the first byte of its answer's payload. */
  enum AnswerWhy : uint8_t { kAnswerTimedOut = 0, kAnswerCancelled = 1, kAnswerAbandoned = 2, kAnswerLost = 3 };
  /**
   * Client messages whose events never finish are answered where they stood: an event of
   * `handler_id` (a client's message; 0: none) that times out, is cancelled with its timed-out
   * tag, or is abandoned or lost with its thread is queued again at once, first on its tag (before
   * the events behind it, and whatever is pushed later), with a new id, named `answer_name_id`
   * and its payload after an AnswerWhy byte. One named `answer_name_id` or `keep_name_id` (an
   * error frame queued as an event) is queued again as it is. `on_timeout`: whether timed-out
   * and cancelled ones are (not when a timeout closes the session). Reported as before all the
   * same (dropped, abandoned, lost), under their old ids.
   */
  void SetAnsweredMessages(uint32_t handler_id, uint32_t answer_name_id, uint32_t keep_name_id, bool on_timeout);
  /** An id for an event pushed later (an event whose parent holds it until it finishes). */
  uint64_t ReserveId() { return next_id_.fetch_add(1); }
  /** `n` consecutive ids for events pushed later; returns the first. */
  uint64_t ReserveIds(uint64_t n) { return next_id_.fetch_add(n); }
  /**
   * Queues `n` events in order under one lock acquisition, with one enqueue time;
   * returns the id of the first (the others follow consecutively), 0 if `n` is 0.
   */
  uint64_t PushBatch(const EventInput* in, size_t n, uint64_t first_id = 0);
  /**
   * Claims up to `max` ready events for `slot` (see native.ts). Returns the
   * count, 0 if nothing is ready, -needed if the first payload does not fit in
   * `bytes_len`, or -1 if the slot is revoked.
   */
  int64_t Take(int slot, double* meta, size_t max, uint8_t* bytes, size_t bytes_len);
  /** The progress cells, kProgressStride per slot (see kProgressStride). */
  std::atomic<int32_t>* ProgressCells() { return progress_; }
  /** Which handlers' events usually park: Take ends a tag's run after one (park_hints.h). */
  ParkHints& Hints() { return hints_; }
  /**
   * Ends the slot's whole claim; `timings` holds kCompleteStride values per event. Skipped
   * events (the later events of a parked event's tag) go back to the front of their tags;
   * parked events keep their tags busy until FinishParked.
   */
  CompleteResult Complete(int slot, size_t count, const double* timings);
  /**
   * Parks claimed event `index`, which the slot started and whose handler now awaits: its
   * tag stays busy after the claim completes, until FinishParked, and the claim's later
   * events of that tag are skipped. `name_id` is the event's current name. False if the slot
   * was revoked or the event is not the one running there.
   */
  bool Park(int slot, size_t index, uint32_t name_id);
  /**
   * Ends a parked event: records its sample (`timing`: one kCompleteStride record, its start
   * in kStartMs as ms after the claim) and frees its tag. kCompleteRevoked when it is no longer
   * parked (it timed out, or its worker was ended).
   */
  CompleteResult FinishParked(uint64_t event_id, const double* timing);
  /**
   * Settles a parked event before FinishParked: from now on a timeout no longer takes it, while
   * its tag stays busy. Its worker delivers what the event produced in between, so the tag's
   * next event, which may run on another thread, cannot overtake it. False if it is no longer
   * parked (it timed out, or its worker was ended).
   */
  bool SettleParked(uint64_t event_id);
  /** Renames a parked event (diagnostics and the timeout count use the final name). */
  void RenameParked(uint64_t event_id, uint32_t name_id);
  /**
   * Times out a parked event, not its worker: cancels its tag's queued events (`dropped`), frees
   * the tag; false if not parked. `timed_out` gets the event itself, its payload included.
   */
  bool TimeoutParked(uint64_t event_id, std::vector<DroppedEvent>* dropped, uint32_t* name_id,
                     DroppedEvent* timed_out = nullptr);
  /** Parked events now. */
  size_t ParkedCount() const;
  /** Ids of the events `slot` parked that are still parked. */
  std::vector<uint64_t> ParkedOf(int slot) const;
  /** Queued events that no slot has taken. */
  uint64_t Waiting() const;
  /** Events of `tag` waiting to be claimed (the timers' backlog, for one). */
  uint64_t TagWaiting(uint64_t tag);
  /** True if some tag could be taken right now. */
  bool HasReady() const;
  /** Tags with queued events that no slot claims: what Take can hand out now. */
  size_t ReadyTags() const;
  /** Drops every queued event (a stopping server); claims in progress stay. Returns the count. */
  size_t DropAllQueued();
  QueueStats Stats() const;
  /** Tags with queued or claimed events; bounded by live events, not by tags ever seen. */
  size_t TagStateCount() const;

  int SlotRegister(double thread_id);
  void SlotAttachTask(int slot, double task_id);
  /**
   * Frees every slot of the thread; returns the events requeued, or -1 if it had none. Parked
   * events of the thread are abandoned: their tags are freed and they are reported in `abandoned`.
   * The event it was running, which never finishes, is reported in `lost` (its id is 0 if none).
   */
  int64_t SlotReleaseThread(double thread_id, std::vector<AbandonedEvent>* abandoned = nullptr,
                            DroppedEvent* lost = nullptr);
  /**
   * Retires every slot of the thread: from now on Take gives it nothing (0), while its open
   * claim and its parked events finish as usual. A replaced pool's workers are retired at the
   * switch, so none of them starts an event queued for the new workers. Returns the slots
   * retired; a slot registered again is no longer retired.
   */
  size_t SlotRetireThread(double thread_id);
  /** Whether a worker thread holds a slot (it serves, or has not been released since it did). */
  bool ThreadHasSlot(double thread_id) const;
  /** Running events on slots, then parked events. */
  std::vector<RunningSlot> SlotsRunning() const;
  /**
   * Times out the running event; false if `event_id` is not running on `slot`. The slot is
   * revoked; its parked events are abandoned and reported in `abandoned`. `timed_out` gets the
   * event itself (its payload included: a client's request is answered).
   */
  bool TimeoutSlot(int slot, uint64_t event_id, std::vector<DroppedEvent>* dropped,
                   std::vector<AbandonedEvent>* abandoned = nullptr, uint32_t* name_id = nullptr,
                   DroppedEvent* timed_out = nullptr);

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  // TagState::claimed_by of a tag held only by a parked event.
  static constexpr int32_t kParkedOwner = -2;
  static constexpr uint32_t kChunkBits = 10;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;

 public:
  /** Run queues (a power of two): more than event threads are expected to collide on. */
  static constexpr size_t kRunQueues = 32;

 private:
  struct Node {
    uint64_t id = 0, tag = 0, session_id = 0;
    int64_t enqueue_ns = 0;
    uint32_t name_id = 0, handler_id = 0;
    uint32_t next = kNil;
    uint8_t kind = 0;
    std::string payload;  // capacity is kept across reuse of the node
  };
  // A tag is in its run queue's ready list exactly when it has queued events, no slot claims
  // it and no parked event holds it.
  struct TagState {
    uint32_t head = kNil, tail = kNil;
    uint32_t count = 0;
    int32_t claimed_by = -1;
    bool parked = false;  // a parked event holds the tag
  };
  enum class ClaimState : uint8_t {
    kTaken,    // not started, or started (the progress cell tells)
    kSkipped,  // after a parked event of its tag: goes back to the queue at Complete
    kParked,   // parked; the node belongs to the parked events once the claim completes
    kGone,     // its node was freed or handed on (timed out while parked, or dropped)
  };
  struct Claimed {
    uint32_t node;
    int64_t enqueue_ns;  // copied from the node, so no node is read to time it
    uint64_t tag;
    ClaimState state;
    uint8_t queue;  // the run queue of its tag (and node)
  };
  struct ParkedEvent {
    uint32_t node;
    int slot;
    bool in_claim;  // the slot's claim holding it is still open
    size_t index;   // its index in that claim
    int64_t enqueue_ns, begin_ns;
    uint32_t name_id;
    bool settling = false;  // SettleParked: finishing now, no longer timed out
  };
  // Counts events per whole second so the last complete second can be reported.
  struct Rate {
    int64_t sec = INT64_MIN, count = 0, prev_sec = INT64_MIN, prev_count = 0;
    void Add(int64_t now_sec, uint64_t n);
    uint64_t LastWholeSecond(int64_t now_sec) const;
  };
  // One run queue: everything in it is guarded by its `mu` (ready_count and the inbox's count
  // are also read without). It is locked as a whole (lock_guard<RunQueue>), which files its
  // inbox (push_inbox.h) before anything else sees it.
  struct alignas(64) RunQueue {
    mutable SpinMutex mu;
    // ready.size(), readable without the lock (a sweep passes over empty run queues).
    std::atomic<uint32_t> ready_count{0};
    PushInbox inbox;
    std::vector<InboxEvent> filing;  // the inbox's events while they are filed
    std::string filing_bytes;
    std::vector<std::unique_ptr<Node[]>> chunks;
    uint32_t free_head = kNil;
    uint32_t node_count = 0;
    SparingMap<TagState> tags;  // erased entries' nodes are reused: pushes allocate nothing
    SparingMap<ParkedEvent> parked;
    std::deque<uint64_t> ready;
    uint64_t waiting = 0, outstanding = 0;
    uint64_t pushed_total = 0, completed_total = 0, cancelled_total = 0;
    Rate inflow, throughput;

    Node& At(uint32_t i) { return chunks[i >> kChunkBits][i & (kChunkSize - 1)]; }
    const Node& At(uint32_t i) const { return chunks[i >> kChunkBits][i & (kChunkSize - 1)]; }
    uint32_t AllocNode();
    void FreeNode(uint32_t i);
    void PushReady(uint64_t tag) { ready.push_back(tag); ready_count.store(static_cast<uint32_t>(ready.size()), std::memory_order_relaxed); }
    void PushReadyFront(uint64_t tag) { ready.push_front(tag); ready_count.store(static_cast<uint32_t>(ready.size()), std::memory_order_relaxed); }
    uint64_t PopReady() {
      uint64_t tag = ready.front();
      ready.pop_front();
      ready_count.store(static_cast<uint32_t>(ready.size()), std::memory_order_relaxed);
      return tag;
    }
    void ClearReady() { ready.clear(); ready_count.store(0, std::memory_order_relaxed); }
    // Tags ready, or events not filed yet (which may make some ready).
    bool MaybeReady() const { return ready_count.load(std::memory_order_relaxed) != 0 || inbox.Count() != 0; }
    // Links `node` at the end of its tag; true when that made the tag ready.
    bool Append(uint64_t tag, uint32_t node);
    // Files the inbox's events into their tags, in order (holds mu).
    void FileInbox();
    void lock();
    bool try_lock();
    void unlock() { mu.unlock(); }
  };
  // Lock order: run queues' mu in index order (an inbox's own lock is taken inside its run
  // queue's, or alone by a push), then a slot's mu; parked_mu_ and slots_mu_
  // (registration) are taken with nothing else held but, for parked_mu_, one run queue's mu. A
  // slot's open claim spans the run queues in `queues`; it is changed with the slot's lock held
  // and, for what lives in a run queue, that run queue's. Take adds a run queue to the open
  // claim holding only that one, so whoever locks the claim's run queues checks `queues` again
  // once it holds the slot (LockClaim). The slot's progress cell is written by its worker
  // without a lock; a timeout changes it only by compare-and-swap.
  struct Slot {
    mutable SpinMutex mu;
    bool used = false;
    bool revoked = false;
    bool retired = false;  // its pool was replaced: Take hands it nothing more
    bool open = false;  // a Take claim has not been completed yet
    int64_t take_ns = 0;  // when the open claim was taken
    double thread_id = 0, task_id = 0;
    std::atomic<uint32_t> queues{0};  // the run queues of the open claim, a bit each
    size_t cursor = 0;  // where its next sweep starts (only its worker's Take touches it)
    std::vector<Claimed> claim;
    std::vector<uint64_t> tags;  // claimed tags, in claim order
  };

  // Holds the locks of a set of run queues, taken in index order (the lock order).
  class QueueLocks {
   public:
    explicit QueueLocks(TagQueue& tq) : tq_(tq) {}
    ~QueueLocks() { Unlock(); }
    QueueLocks(const QueueLocks&) = delete;
    QueueLocks& operator=(const QueueLocks&) = delete;
    void Lock(uint32_t mask);
    void Unlock();

   private:
    TagQueue& tq_;
    uint32_t mask_ = 0;
  };
  static_assert(kRunQueues <= 32, "a claim's run queues are one 32-bit mask");

  size_t QueueIndex(uint64_t tag) const {
    return static_cast<size_t>((tag * 0x9E3779B97F4A7C15ull) >> 58) & queue_mask_;
  }
  RunQueue& QueueOf(uint64_t tag) { return queues_[QueueIndex(tag)]; }
  Slot& CheckedSlot(int slot);
  const Slot& CheckedSlot(int slot) const;
  // Locks the run queues of the slot's open claim, then the slot, and returns their mask; 0
  // (only the slot locked) when it holds no open claim.
  uint32_t LockClaim(Slot& s, QueueLocks* queue_locks, std::unique_lock<SpinMutex>* slot_lock);
  void AppendLocked(RunQueue& q, uint64_t tag, uint32_t node);
  // Claims ready runs of `q` (locked) for slot `s`, as events `*n` on of the claim (whose
  // payloads fill `bytes` up to `*used`); see Take. Returns how many it added, -1 when the slot
  // is revoked, or -needed when the claim is empty and the first payload does not fit.
  int64_t TakeLocked(RunQueue& q, Slot& s, int slot, double* meta, size_t max, uint8_t* bytes, size_t bytes_len,
                     size_t* n, size_t* used);
  // Returns the slot's unstarted claimed events to the front of their tags and
  // unclaims its tags; with `drop_tag`, that tag's events (claimed or queued)
  // are dropped instead. Returns how many events were requeued. Holds the claim's
  // run queues (`queues`) and s.mu. `running` is the index of the last begun event
  // (its progress cell), or kProgressNone; `lost` gets that event when it is given. A client's
  // message among the events that never finish is answered in place (`running_why` for the
  // running one, kAnswerCancelled for the dropped tag's), first on its tag.
  size_t UnwindClaimLocked(uint32_t queues, Slot& s, int32_t running, bool drop_tag, uint64_t tag_to_drop,
                           std::vector<DroppedEvent>* dropped, bool* made_ready, DroppedEvent* lost,
                           uint8_t running_why);
  // Abandons every parked event of the slot (its worker is gone), in every run queue.
  void AbandonParked(int slot, std::vector<AbandonedEvent>* abandoned, bool* made_ready);
  // Frees a tag held by a parked event that ended; makes it ready if it has queued events.
  void ReleaseParkedTagLocked(RunQueue& q, uint64_t tag, bool* made_ready);
  // Requeues `nodes` (in order) at the front of their tags. Holds q.mu.
  void RequeueFrontLocked(RunQueue& q, const std::vector<uint32_t>& nodes);
  // The run queue of a parked event (kRunQueues if it is not parked).
  size_t ParkedQueue(uint64_t event_id) const;
  void ForgetParked(uint64_t event_id);
  std::atomic<int32_t>& Progress(size_t slot) { return progress_[slot * kProgressStride]; }
  const std::atomic<int32_t>& Progress(size_t slot) const { return progress_[slot * kProgressStride]; }
  std::atomic<int32_t>& ProgressStartUs(size_t slot) { return progress_[slot * kProgressStride + 1]; }
  const std::atomic<int32_t>& ProgressStartUs(size_t slot) const { return progress_[slot * kProgressStride + 1]; }
  std::atomic<int32_t>& ProgressName(size_t slot) { return progress_[slot * kProgressStride + kProgressNameId]; }
  const std::atomic<int32_t>& ProgressName(size_t slot) const { return progress_[slot * kProgressStride + kProgressNameId]; }
  size_t SlotIndex(const Slot& s) const { return static_cast<size_t>(&s - slots_.data()); }
  // When event `i` of the open claim started, from the worker's timings.
  int64_t StartNs(const Slot& s, size_t i, int32_t running, const double* timings, int64_t now) const;
  void RecordSamples(const double* timings, const int64_t* start_ns, const int64_t* enqueue_ns, size_t n);
  void DropQueuedLocked(RunQueue& q, TagState& st, std::vector<DroppedEvent>* out);
  // As DropQueuedLocked, but the tag's client messages are answered in place (SetAnsweredMessages).
  void AnswerOrDropQueuedLocked(RunQueue& q, TagState& st, std::vector<DroppedEvent>* out);
  // Whether `nd` is answered in place for `why`; if so it is renamed, its payload marked and
  // given a new id (SetAnsweredMessages). Report it before.
  bool AnswerInPlace(Node& nd, uint8_t why);

  Profiler* profiler_;
  WakeSignal* wake_;
  size_t queue_mask_;  // run queues in use, less one
  std::array<RunQueue, kRunQueues> queues_;
  // Serialises slot registration and release (rare); a slot's fields are guarded by its mu.
  mutable std::mutex slots_mu_;
  std::array<Slot, kMaxSlots> slots_;
  // The run queue of each parked event, for the calls that name only the event.
  mutable SpinMutex parked_mu_;
  std::unordered_map<uint64_t, uint32_t> parked_queue_;
  alignas(64) std::atomic<int32_t> progress_[kMaxSlots * kProgressStride] = {};
  alignas(64) ParkHints hints_;
  alignas(64) std::atomic<uint64_t> next_id_{1};
  // SetAnsweredMessages.
  std::atomic<uint32_t> answer_handler_{0}, answer_name_{0}, keep_name_{0};
  std::atomic<bool> answer_timeouts_{false};
};

}  // namespace gsf
