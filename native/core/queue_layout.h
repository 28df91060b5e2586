// The tag queue's layout shared with JavaScript: the strides and fields of the arrays Take,
// PushBatch and Complete exchange, and the slots' progress cells (src/native.ts holds copies,
// checked at load by `layout`).
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

namespace gsf {

constexpr uint64_t kNullTag = 0;
constexpr uint64_t kTimerTag = 1;
constexpr uint8_t kKindTimer = 2;

/** Per-event stride of the `meta` array filled by Take. */
constexpr size_t kTakeStride = 9;
/** Per-event stride of the `records` array read by PushBatch. */
constexpr size_t kPushStride = 6;
/** Per-event stride of the `timings` array read by Complete. */
constexpr size_t kCompleteStride = 12;
enum TimingField : size_t {
  kHandlerMs = 0, kIoWaitMs, kNameId, kFlags, kRollbacks,
  kObjectCreateCount, kObjectCount, kObjectCacheHitRate, kObjectNolockRate,
  kObjectLeaseRate, kObjectNullRate,
  // Ms from the claim (Take) to the event's start, for events begun through the progress cell.
  kStartMs,
};
constexpr uint32_t kFlagFailed = 1;
constexpr uint32_t kFlagNotRun = 2;
/** Field offsets of one `meta` record filled by Take. */
enum TakeField : size_t {
  kTakeId = 0, kTakeTag, kTakeNameId, kTakeHandlerId, kTakeSessionId, kTakeKind, kTakePayloadOffset,
  kTakePayloadLength, kTakeQueueAgeMs,
};
/** Field offsets of one `records` entry read by PushBatch. */
enum PushField : size_t {
  kPushTag = 0, kPushNameId, kPushHandlerId, kPushSessionId, kPushKind, kPushPayloadLength,
};
/** What Complete and FinishParked report. */
enum CompleteResult : int { kCompleteRevoked = 0, kCompleteDone = 1, kCompleteMadeReady = 2 };

/**
 * Progress cells: one cache line of int32 per slot, shared with the slot's worker, which marks
 * each claimed event started there instead of calling Begin. Cell 0 holds the index of the last
 * begun event of the claim (kProgressNone before the first); the worker moves it from i - 1 to
 * i with a compare-and-swap, and a timeout swaps it to kProgressRevoked, so exactly one of the
 * two wins. Cell 1 holds the event's start in µs after the claim, written before the swap.
 * Cell 2 holds the running event's current name id (0: the name it was queued with); the worker
 * writes it at the start and when the event is renamed, so diagnostics use the final name.
 * A worker may skip claimed events (see Park), so the indices it starts need not be consecutive:
 * it swaps from the last index it started.
 */
constexpr size_t kProgressStride = 16;
constexpr size_t kProgressIndex = 0;
constexpr size_t kProgressStartUs = 1;
constexpr size_t kProgressNameId = 2;
constexpr int32_t kProgressNone = -1;
constexpr int32_t kProgressRevoked = INT32_MIN;
static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t) && std::atomic<int32_t>::is_always_lock_free,
              "progress cells are shared with JavaScript as an Int32Array");

}  // namespace gsf
