// A run queue's inbox: where batches of pushed events wait, in push order, until the run queue is
// next locked.
//
// A batch push (the main thread's invokes, an I/O thread's messages) used to file every event
// into its tag's list itself: take a node, find or make the tag's state, link it, mark the tag
// ready. On a many-core machine that is the producer's largest cost after encoding, and the
// producer is one thread. Now the producer copies its events here under the inbox's own lock
// (taken only to append or to hand everything over), and whoever locks the run queue next (an
// event thread about to claim, most often) files them first. Every lock of a run queue files the
// inbox, so nothing that reads or changes the run queue's tags sees it without them, and the
// events of a tag keep their push order: the inbox is filed before any later event of the run
// queue is.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "spin_mutex.h"

namespace gsf {

/** One event waiting in an inbox; its payload is `payload_len` bytes of the inbox's bytes, in order. */
struct InboxEvent {
  uint64_t id, tag, session_id;
  int64_t enqueue_ns;
  uint32_t name_id, handler_id, payload_len;
  uint8_t kind;
};

class PushInbox {
 public:
  /** Appends events while it lives; they become visible to Count as it ends. */
  class Writer {
   public:
    explicit Writer(PushInbox& inbox) : inbox_(inbox), lock_(inbox.mu_) {}
    ~Writer() { inbox_.count_.store(static_cast<uint32_t>(inbox_.events_.size()), std::memory_order_release); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    void Add(const InboxEvent& ev, const uint8_t* payload) {
      inbox_.events_.push_back(ev);
      if (ev.payload_len != 0) inbox_.bytes_.append(reinterpret_cast<const char*>(payload), ev.payload_len);
    }

   private:
    PushInbox& inbox_;
    std::lock_guard<SpinMutex> lock_;
  };

  /** Events waiting; read without the lock (a sweep passes over run queues with none). */
  uint32_t Count() const { return count_.load(std::memory_order_acquire); }

  /**
   * Moves every waiting event into `events` and their payloads into `bytes` (both emptied
   * first; their buffers come back here for the next appends, so nothing is allocated in
   * steady state).
   */
  void TakeAll(std::vector<InboxEvent>* events, std::string* bytes) {
    events->clear();
    bytes->clear();
    std::lock_guard<SpinMutex> lock(mu_);
    events->swap(events_);
    bytes->swap(bytes_);
    count_.store(0, std::memory_order_relaxed);
  }

 private:
  SpinMutex mu_;
  std::vector<InboxEvent> events_;
  std::string bytes_;
  std::atomic<uint32_t> count_{0};
};

}  // namespace gsf
