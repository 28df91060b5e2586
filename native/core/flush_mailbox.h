// Flush notes from event threads to the main thread: which worker's session-out ring has
// records up to which position, and where that flush stands in the process-wide flush order.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace gsf {

/** One flush of a worker's ring (see src/session/outbound-writer.ts). */
struct FlushNote {
  int32_t thread;  // the worker's threadId
  uint32_t end;    // ring position the records run up to
  double seq;      // process-wide flush sequence number
};

/**
 * A many-producer, one-consumer list of flush notes. A producer learns whether the list was
 * empty, so only the first note after a drain wakes the consumer: notes of many threads that
 * arrive while the consumer is awake or already woken cost no further wake-up.
 */
class FlushMailbox {
 public:
  /** Adds a note; true when the mailbox was empty (the caller wakes the consumer). */
  bool Post(const FlushNote& note);
  /** Every note posted since the last call, in posting order. */
  std::vector<FlushNote> Take();
  /** Notes waiting now. */
  size_t Size();

 private:
  std::mutex mu_;
  std::vector<FlushNote> notes_;
};

}  // namespace gsf
