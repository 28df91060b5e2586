/**
 * The data shapes of the native core (re-exported by `native.ts`, which types its functions):
 * the layouts of the arrays exchanged with the tag queue (checked against the addon at load),
 * event kinds and reserved tags, and what the queue, slots, profiler, counters and object cache
 * hand back.
 */

/** Event kinds, as stored with each queued event (affects tag inheritance, SPEC 6.2.4). */
export const EventKind = { user: 0, network: 1, timer: 2, engine: 3, api: 4 } as const;
export type EventKindValue = (typeof EventKind)[keyof typeof EventKind];

/** Reserved tag values. Random, session and user tags are drawn from [2^32, 2^53). */
export const NULL_TAG = 0;
export const TIMER_TAG = 1;

/** Per-event stride of the `meta` array filled by `take`. */
export const TAKE_STRIDE = 9;
/** Offsets inside one `take` record; `queueAgeMs` is how long the event had waited when taken. */
export const TakeField = {
  id: 0, tag: 1, nameId: 2, handlerId: 3, sessionId: 4, kind: 5, payloadOffset: 6, payloadLength: 7, queueAgeMs: 8,
} as const;

/** Per-event stride of the `records` array passed to `pushBatch`. */
export const PUSH_STRIDE = 6;
/** Offsets inside one `pushBatch` record; the payloads follow one another in `bytes`. */
export const PushField = { tag: 0, nameId: 1, handlerId: 2, sessionId: 3, kind: 4, payloadLength: 5 } as const;

/** Per-event stride of the `timings` array passed to `complete`. */
export const COMPLETE_STRIDE = 12;
/** Offsets inside one `complete` record. Unused fields are 0. */
export const CompleteField = {
  handlerMs: 0, ioWaitMs: 1, nameId: 2, flags: 3, rollbacks: 4,
  objectCreateCount: 5, objectCount: 6, objectCacheHitRate: 7, objectNolockRate: 8,
  objectLeaseRate: 9, objectNullRate: 10, startMs: 11,
} as const;

/**
 * Progress cells (`slotProgressView`): PROGRESS_STRIDE int32 per slot. Cell 0 is the index of
 * the claim's last started event (-1 before the first); a worker starts event i by swapping it
 * from i - 1 to i (`Atomics.compareExchange`), after writing the event's start in µs after the
 * claim to cell 1, and records the same start, in ms, as the event's `CompleteField.startMs`. A
 * failed swap means the slot was revoked (an event of it timed out). This replaces `begin`.
 */
export const PROGRESS_STRIDE = 16;
/** Offsets inside one slot's progress cells. */
export const ProgressField = { index: 0, startUs: 1, nameId: 2 } as const;
/** Handler ids `parkHintsView` has a byte for. */
export const PARK_HINT_HANDLERS = 1 << 16;
/** Bits of `CompleteField.flags`. */
export const CompleteFlag = { failed: 1, notRun: 2 } as const;
/** What `complete` and `finishParked` return. */
export const CompleteResult = { revoked: 0, done: 1, madeReady: 2 } as const;

/** Sort orders of `profilerAll` (SPEC 4.5). */
export const ProfileOrder = {
  none: 0, executionTimeSum: 1, handlerTimeSum: 2, ioWaitTimeSum: 3,
  executionTime: 4, handlerTime: 5, ioWaitTime: 6,
} as const;
export type ProfileOrderValue = (typeof ProfileOrder)[keyof typeof ProfileOrder];

/** SPEC 2.6 summary block. */
export interface ProfileSummaryWindow {
  count: number;
  execution_time_mean_in_sec: number; execution_time_stdev_in_sec: number; execution_time_max_in_sec: number;
  io_wait_time_mean_in_sec: number; io_wait_time_stdev_in_sec: number; io_wait_time_max_in_sec: number;
  queue_time_mean_in_sec: number; queue_time_stdev_in_sec: number; queue_time_max_in_sec: number;
}
export interface ProfileSummary { all_time: ProfileSummaryWindow; last1min: ProfileSummaryWindow }

/** SPEC 2.6 per-event block; `timeout_count` is present in `all_time` only. */
export interface ProfileEventWindow {
  execution_count: number;
  rollback_count_mean: number; rollback_count_max: number;
  execution_time_mean_in_sec: number; execution_time_stdev_in_sec: number; execution_time_max_in_sec: number;
  handler_time_mean_in_sec: number; handler_time_stdev_in_sec: number; handler_time_max_in_sec: number;
  io_wait_time_mean_in_sec: number; io_wait_time_stdev_in_sec: number; io_wait_time_max_in_sec: number;
  queue_time_mean_in_sec: number; queue_time_stdev_in_sec: number; queue_time_max_in_sec: number;
  timeout_count?: number;
  object_create_count_mean: number; object_count_mean: number; object_cache_hit_rate_mean: number;
  object_nolock_rate_mean: number; object_lease_rate_mean: number; object_null_rate_mean: number;
}
export interface ProfileEvent { all_time: ProfileEventWindow; last1min: ProfileEventWindow }

/** One time of one event: counts per bucket (not cumulative; the last is above every bound) and the sum in seconds. */
export interface LatencyHistogram { buckets: number[]; sum: number }

/** All-time histograms of one event name's four times (SPEC 2.6), from one snapshot. */
export interface EventHistograms {
  count: number;
  execution: LatencyHistogram; handler: LatencyHistogram; io_wait: LatencyHistogram; queue: LatencyHistogram;
}

/** `profilerHistograms()`: the bucket bounds (seconds, ascending) and every named event, by name. */
export interface ProfileHistograms { bounds: number[]; events: Array<[string, EventHistograms]> }

/** `event/performance/queue` figures plus totals. Rates are over the last whole second. */
export interface QueueStats {
  inflow_per_sec: number; throughput_per_sec: number; waiting: number; outstanding: number;
  pushed_total: number; completed_total: number; cancelled_total: number;
}

/** One running event as seen by the watchdog; `parked`: it awaits (holds its tag, not a thread). */
export interface SlotState {
  slot: number; threadId: number; taskId: number;
  eventId: number; tag: number; nameId: number; sessionId: number; kind: number; elapsedMs: number;
  parked: boolean;
}

/** An event dropped by a tag cancellation, or abandoned (its worker ended while it awaited). */
export interface CancelledEvent { id: number; tag: number; nameId: number; sessionId: number }

/**
 * What a timeout did: the event itself (with the name it was queued under), the tag's cancelled
 * events, the worker's abandoned awaiting events, the final name.
 */
export interface TimeoutOutcome { event: CancelledEvent; dropped: CancelledEvent[]; abandoned: CancelledEvent[]; nameId: number }

/** The layout of the arrays exchanged with the queue, as the addon was built (checked at load). */
export interface NativeLayout {
  takeStride: number; pushStride: number; completeStride: number; progressStride: number;
  take: typeof TakeField; push: typeof PushField; complete: typeof CompleteField; progress: typeof ProgressField;
  flags: typeof CompleteFlag; parkHintHandlers: number;
}

export interface CounterValue { type: 'int' | 'double'; value: number; description: string }

/** Figures of the object cache (`objCacheStats`). */
export interface ObjectCacheStats {
  objects: number; tombstones: number; keys: number; bytes: number; capacity: number;
  hits: number; misses: number; evictions: number;
}
