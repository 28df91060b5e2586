/**
 * Typed view of the native core (`native/binding` over `native/core`).
 *
 * The addon is loaded in the main thread and in every event worker; its state is
 * process-global, so every function here may be called from any thread at once.
 * Numbers that are 64-bit in C++ (event ids, tags, session ids, integer counters)
 * cross as JS numbers and stay below 2^53.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

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

/** What a timeout did: the tag's cancelled events, the worker's abandoned awaiting events, the final name. */
export interface TimeoutOutcome { dropped: CancelledEvent[]; abandoned: CancelledEvent[]; nameId: number }

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

/** Status codes of native plugins (`GSF_STATUS_*` in native/include/gsf_plugin.h). */
export const NativeStatus = {
  ok: 0, invalidArgument: 1, notFound: 2, conflict: 3, unavailable: 4, internal: 5, notImplemented: 6,
  permissionDenied: 7, unauthenticated: 8, resourceExhausted: 9, expired: 10,
} as const;
/** `gsf_status_name` of each status code, by code. */
export const NATIVE_STATUS_NAMES: readonly string[] = [
  'OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'CONFLICT', 'UNAVAILABLE', 'INTERNAL', 'NOT_IMPLEMENTED',
  'PERMISSION_DENIED', 'UNAUTHENTICATED', 'RESOURCE_EXHAUSTED', 'EXPIRED',
];

/**
 * Codes in a native call's `effects`, a flat array of records:
 * `[send, sessionId, frame]` (a string for a json session, bytes for a msgpack one),
 * `[publish, group, jsonFrame, msgpackFrame]`, `[log, level, line]` (level 0 INFO, 1 WARNING,
 * 2 ERROR, -n verbose level n).
 */
export const EffectKind = {
  send: 1, publish: 2, log: 3, apiAnswer: 4, objectFetch: 5, objectFetchBy: 6, objectSet: 7,
  /** An object fetched for write that the addon answered from the cache inside the call. */
  objectHeld: 8,
  sessionGroup: 20, sessionClose: 21, broadcast: 22, accountRequest: 23,
  serviceRequest: 30,
} as const;
// ABI 1.1 records: `[apiAnswer, requestId, status, jsonBody | null, message]` (an answer of the
// call handling the request), `[objectFetch, continuation, type, id, mode]`,
// `[objectFetchBy, continuation, type, field, keyMsgpack, mode]`, `[objectSet, type, id, fieldsMsgpack]`,
// `[objectHeld, type, id, version, storedFieldsMsgpack]` (the event's copy is made from it).
// ABI 1.2 sessions and accounts: `[sessionGroup, sessionId, group, join 1 | leave 0]`,
// `[sessionClose, sessionId, reason]`, `[broadcast, sessionIds | null (all), jsonFrame | null, msgpackFrame | null]`,
// `[accountRequest, continuation (0: no answer wanted), op (GSF_ACCOUNT_*), account, sessionId]`.
// ABI 1.2 objects, cluster and authenticator: `[serviceRequest, continuation (0: none), op
// (ServiceOp of src/plugins/native-results.ts), argsMsgpack (an array)]`.

/** What a native plugin registered for the API service and the console (ABI 1.1). */
export interface NativeApiRegistrations {
  routes: Array<{ method: string; path: string; name: string; entry: number }>;
  /** `[place in gsf_type_console_handlers (1-based), entry]`. */
  operations: Array<[number, number]>;
  editableAccount: string[];
  editableCharacter: string[];
  noticeCategories: string[];
  missionNormal: string[];
  missionAchievement: string[];
  giftable: Array<[string, string]>;
  campaigns: Array<{ type: string; begin: number; end: number }>;
  queries: Array<{ name: string; method: string; uri: string; requestFields: string[]; responseFields: string[] | null; entry: number }>;
}

/** A loaded native plugin: its handlers, by the index the call functions take. */
export interface NativePluginInfo {
  name: string;
  version: string;
  /** The library's resolved path. */
  path: string;
  events: Array<{ name: string; handler: number }>;
  messages: Array<{ type: string; handler: number }>;
  /** Its API routes and console registrations, null when it has none. */
  api: NativeApiRegistrations | null;
  /** What init logged (first load in the process only). */
  effects: unknown[];
  /** ABI 1.2: the lifecycle hooks its descriptor has, and whether it registered timeout handlers. */
  hooks: { start: boolean; stop: boolean; unload: boolean; timeout: boolean };
}

/** What a native lifecycle hook gave back: its status, set_error's message, its effects. */
export interface NativeHookOutcome {
  status: number;
  error: string;
  effects: unknown[];
}

/** Cells of `pluginContextView`: the event a native call runs for, written by the caller. */
export const CONTEXT_CELLS = 20;
export const ContextCell = {
  eventId: 0, tag: 1, kind: 2, sessionId: 3, nameId: 4, frameStart: 5, frameEnd: 6,
  /** An API call's request id and writer kind use the frame cells. */
  requestId: 5, answerKind: 6,
  /** Where a message call given the outbound ring writes its frames (`pluginCallMessage`). */
  ringWrite: 7,
  /**
   * 1 when the object cache may answer the call's reads in native code (the event holds no
   * objects of its own); the reads it answered, and how many found no object, come back in
   * the next two cells.
   */
  objectReads: 8, readsAnswered: 9, readsNone: 10,
  /** 1 when the addon may answer the call's account_of from the session accounts (no account call of the event is on its way). */
  accountReads: 11,
  /**
   * `pluginRunEvents`: the worker's slot, the claim's range [runFrom, runTo), the index of its
   * last started event and the first event's start (ms after the claim) in; the index it stopped
   * at, the last started index and how it ended (RunState) out.
   */
  runSlot: 12, runFrom: 13, runTo: 14, runStarted: 15, runStartMs: 16, runNext: 17, runState: 18,
} as const;

/**
 * How `pluginRunEvents` ended: every event of the range ran; it stopped at `runNext`, whose
 * call returned the value for the worker to settle; or the slot was revoked (a timeout).
 */
export const RunState = { all: 0, stopped: 1, revoked: 2 } as const;

/**
 * What a native call returns: null when it succeeded with nothing to apply; a frame (a string
 * for a json session, bytes for a msgpack one) when it succeeded with exactly one frame for its
 * own session (a reply); its effects (see EffectKind) when it succeeded with others; otherwise
 * a NativeCallResult.
 */
export type NativeCallOutcome = null | string | Uint8Array | unknown[] | NativeCallResult;

/** A native call that did not just succeed quietly. */
export interface NativeCallResult {
  status: number;
  error: string;
  effects: unknown[];
  /** The client frame did not decode; the handler did not run. */
  decodeFailed: boolean;
  /** The request id of the message the handler ran for, if it had one. */
  messageId?: number;
}

export interface NativeCore {
  /** Interns a string (event or handler name) to a process-wide id >= 1; same string, same id. */
  intern(name: string): number;
  /** Inverse of `intern`; '' for an unknown id. */
  nameOf(id: number): string;

  // ---- tag queue -------------------------------------------------------------
  /** Queues an event; returns its process-unique id (>= 1): `id` when one was reserved, else a new one. */
  push(tag: number, nameId: number, handlerId: number, sessionId: number, kind: number,
    payload: Uint8Array | null, id?: number): number;
  /** An id for an event that is pushed later (`push(..., id)`). */
  reserveEventId(count?: number): number;
  /**
   * Queues `count` events in order under one lock, as `push` would one after another:
   * `records` holds PUSH_STRIDE values per event and the payloads follow one another in
   * `bytes`. Returns the first event's id (the others follow consecutively), 0 for none.
   */
  pushBatch(records: Float64Array, count: number, bytes: Uint8Array, firstId?: number): number;
  /**
   * Claims up to `max` ready events for `slot`: tags not claimed by any slot, in push order,
   * each tag's queued events consecutively, up to and including the first whose handler is
   * marked in `parkHintsView` (its tag's later events would wait for it). Fills `meta`
   * (TAKE_STRIDE per event) and copies payloads into `bytes`. Returns the count, 0 when nothing
   * is ready, -N when the first payload needs N bytes (N >= 2, so never -1; grow `bytes` and
   * call again), -1 when the slot is revoked.
   */
  take(slot: number, meta: Float64Array, bytes: Uint8Array, max: number): number;
  /** The slots' progress cells, shared by every thread (see PROGRESS_STRIDE). */
  slotProgressView(): ArrayBuffer;
  /**
   * One byte per handler id (below PARK_HINT_HANDLERS), shared by every thread: 1 when that
   * handler's events usually park. Workers set and clear it; `take` reads it.
   */
  parkHintsView(): ArrayBuffer;
  /**
   * Completes the slot's whole claim (`count` events, COMPLETE_STRIDE timings each), records
   * profile samples (when the profiler is on) and frees the claimed tags; the later events of a
   * parked event's tag go back to the front of the queue. A `CompleteResult`.
   */
  complete(slot: number, count: number, timings: Float64Array): number;
  /**
   * Parks claimed event `index`, running on the slot, whose handler awaits: its tag stays
   * busy after the claim completes, until `finishParked`; the claim's later events of the tag
   * are skipped. False if the slot was revoked or the event is not the one running there.
   */
  park(slot: number, index: number, nameId: number): boolean;
  /** Ends a parked event with the timing record at `index` of `timings`; a `CompleteResult` (revoked: it timed out or was abandoned). */
  finishParked(eventId: number, timings: Float64Array, index: number): number;
  /**
   * Settles a parked event before `finishParked`: a timeout no longer takes it and its tag stays
   * busy, so what it produced can leave before the tag's next event runs. False if it timed out
   * or was abandoned.
   */
  settleParked(eventId: number): boolean;
  /** Renames a parked event (diagnostics use the final name). */
  renameParked(eventId: number, nameId: number): void;
  /** Times out a parked event without ending its worker; null if it is not parked. */
  timeoutParked(eventId: number): TimeoutOutcome | null;
  /** Ids of the events `slot` parked that are still parked. */
  parkedOf(slot: number): number[];
  /** The layout constants the addon was built with. */
  layout(): NativeLayout;
  /** The enums this file copies, as the addon was built (checked at load). */
  enumLayout(): Record<string, unknown>;
  /** Number of queued events (not claimed). */
  waiting(): number;
  /** Number of tags that have queued events and are not claimed (what `take` can hand out now). */
  ready(): number;
  /** Drops every queued event and every timer (a stopping server); slots and counters stay. */
  queueReset(): void;
  queueStats(): QueueStats;

  // ---- worker slots ------------------------------------------------------------
  /** Registers the calling worker thread; returns the lowest free slot index. */
  slotRegister(threadId: number): number;
  /** Records which dispatcher task the slot is running (for aborts). */
  slotAttachTask(slot: number, taskId: number): void;
  /**
   * Frees the slot of a worker that is gone: claimed events that had not begun go back to the
   * front of their tags in order; a begun but uncompleted event is dropped; its parked events
   * are abandoned (their tags freed). `requeued` is -1 if the thread had no slot.
   */
  slotReleaseThread(threadId: number): { requeued: number; abandoned: CancelledEvent[] };
  /**
   * Retires the slots of a worker whose pool was replaced: `take` hands them nothing more,
   * while their open claims and parked events finish. Returns the slots retired.
   */
  slotRetireThread(threadId: number): number;
  /** Events running on slots, then parked events. */
  slotsRunning(): SlotState[];
  /**
   * Times out `eventId` running on `slot`: revokes the slot, counts a timeout for the event's
   * final name, drops every queued or claimed event of its tag, requeues the slot's other
   * unstarted events and abandons its parked ones. Null if that event is no longer running there.
   */
  timeoutSlot(slot: number, eventId: number): TimeoutOutcome | null;
  /**
   * Ends the process at once with `code`, without joining threads (Node's exit joins every
   * worker thread, and one stuck in native code never returns). For a server that stopped.
   */
  exitNow(code: number): never;

  // ---- wake-up and timers ------------------------------------------------------
  /** Sets (or clears with null) the main-thread function called when work may be ready. */
  setWakeCallback(fn: (() => void) | null): void;
  /** Asks for one wake-up at the next push or due timer change; fires at once if work waits. */
  armWake(): void;
  /** Adds a timer firing after `delayMs`, then every `intervalMs` if > 0; returns its id. */
  timerAdd(delayMs: number, intervalMs: number, nameId: number, handlerId: number,
    payload: Uint8Array | null): number;
  /** Cancels a timer; false if unknown or already fired (one-shot). */
  timerCancel(id: number): boolean;
  /** Pushes every due timer onto TIMER_TAG; returns ms until the next due timer, or -1. */
  timerFire(): number;

  // ---- counters ----------------------------------------------------------------
  counterUpdate(category: string, name: string, value: number, isDouble: boolean, description?: string): void;
  /** Adds `amount` (creates an int counter at 0 first if missing); returns the new value. */
  counterIncrease(category: string, name: string, amount: number): number;
  counterDecrease(category: string, name: string, amount: number): number;
  /** The value truncated to an integer, or null if there is no such counter. */
  counterReadInt(category: string, name: string): number | null;
  counterGet(category: string, name: string): CounterValue | null;
  /** Just the value (no object), or null if there is no such counter. */
  counterValue(category: string, name: string): number | null;
  counterCategories(): string[];
  /** Counter names of a category, or null if the category does not exist. */
  counterList(category: string): string[] | null;
  /**
   * A number naming the counter for `counterValueAt`, or -1 if there is none. A removed
   * counter's handle reads as null; one created again under the same name gets a new handle.
   */
  counterHandle(category: string, name: string): number;
  /** The value of the counter with this handle, or null (removed, or no such handle). */
  counterValueAt(handle: number): number | null;
  /**
   * Four bytes holding a number that changes whenever a counter category appears or
   * disappears; read with `Atomics.load(new Int32Array(view), 0)`. Ask once per thread.
   */
  counterLayoutView(): ArrayBuffer;

  // ---- profiler ----------------------------------------------------------------
  profilerEnable(on: boolean): void;
  profilerReset(): void;
  /** True while a reset is in progress (`event/profiling/reset`). */
  profilerResetting(): boolean;
  profilerSummary(): ProfileSummary;
  profilerEvent(name: string): ProfileEvent | null;
  profilerAll(order: ProfileOrderValue): Array<[string, ProfileEvent]>;
  /** All-time latency histograms of every named event (fixed buckets, for Prometheus). */
  profilerHistograms(): ProfileHistograms;

  // ---- object cache (process-wide, every thread) ---------------------------------
  /**
   * Binds this thread's arrays for `objCacheLookup` (replacing any bound before): each array
   * passed to a call costs more than the lookup itself. Bind again after replacing one.
   * `held`: the stamps of the copies the thread holds decoded, a power of two slots, each stamp
   * in slot `stamp % length` (DecodedCopies).
   */
  objCacheBind(buffer: Uint8Array, meta: Float64Array, held?: Float64Array | null): void;
  /**
   * Looks up object `id` of type index `type` with the arrays this thread bound. Returns its
   * byte length (copied into the buffer when they fit; otherwise grow it, bind it and ask again),
   * -1 when not cached, -2 when cached as deleted, -3 for an entry whose stamp `held` holds
   * (nothing copied). `meta[0]` receives the version when found or deleted, `meta[1]` (when
   * there) the entry's stamp when found (the same stamp, the same bytes). Throws when the thread
   * bound no arrays.
   */
  objCacheLookup(type: number, id: string): number;
  /** Caches an object unless the same or a newer version (or deletion) is cached; returns whether it stored. */
  objCachePut(type: number, id: string, version: number, bytes: Uint8Array): boolean;
  /** Caches that the object was deleted at `version` (same rule as objCachePut). */
  objCachePutDeleted(type: number, id: string, version: number): boolean;
  /** Drops the cached copy when its version is <= `upTo`. */
  objCacheInvalidate(type: number, id: string, upTo: number): boolean;
  /** Caches unique key `field` (its index) = `value` -> object id. */
  objCachePutKey(type: number, field: number, value: string, id: string): void;
  /** The cached id of a unique key, or null. */
  objCacheGetKey(type: number, field: number, value: string): string | null;
  /**
   * This thread's object types for reads answered in native code, as msgpack
   * `[[name, index, [field…], [[keyField, uniqueIndex, isInteger]…]]…]`, read from object-store
   * settings version `configVersion` (null: none).
   */
  objReadTypes(types: Uint8Array | null, configVersion: number): void;
  /** Sets the cache's byte budget (shrinking evicts at once). */
  objCacheConfigure(capacityBytes: number): void;
  objCacheClear(): void;
  objCacheStats(): ObjectCacheStats;
  /** Cached objects per type index. */
  objCacheCountsByType(): number[];
  /** The object store's settings and schema (JSON), published by the main thread. */
  objConfigSet(json: string): void;
  objConfigGet(): string;
  objConfigVersion(): number;

  // ---- native plugins ------------------------------------------------------------
  /**
   * Loads a native plugin library once per process (dlopen, never unloaded); later calls return
   * the same plugin. Throws an Error with `code` GSF_ERR_PLUGIN_LOAD, a `reason` (missing,
   * not_library, truncated, foreign_machine, cannot_open, no_entry, abi_major, abi_minor, struct_size, bad_descriptor,
   * name_taken, init_failed, duplicate, too_many) and a one-line message naming the path.
   * With `replaces` (a reload loading a fresh copy of a rebuilt library), the library must be
   * the plugin of that name and takes over the events and message types of its older copies.
   */
  pluginLoad(path: string, replaces?: string): NativePluginInfo;
  /** Names managed events that native invoke and timers may target. */
  pluginDeclareEvents(names: string[]): void;
  /** This thread's call context cells (CONTEXT_CELLS float64; see ContextCell), written before each call. */
  pluginContextView(): ArrayBuffer;
  /**
   * Runs native event handler `handler`, for the event whose fields are in this thread's context
   * cells, with a msgpack payload. See NativeCallOutcome for what it returns.
   */
  pluginCallEvent(handler: number, payload: Uint8Array | null): NativeCallOutcome;
  /**
   * Runs the worker's claimed events from the context cell `runFrom` natively while they are
   * events of the handler the first one names (native handler `handler`): each is started in the
   * slot's progress cells and its start and handler time recorded in `timings`, as the worker
   * does. It stops before `runTo`, another handler or a network event, or at the first call
   * that leaves the worker something to do, returning that call's outcome (RunState.stopped);
   * otherwise it returns null. The cells `runNext`, `runStarted` and `runState` say where and why.
   */
  pluginRunEvents(handler: number, meta: Float64Array, timings: Float64Array, bytes: Uint8Array): NativeCallOutcome;
  /**
   * Runs native message handler `handler` on the client frame `bytes[frameStart, frameEnd)` (the
   * context cells) of the event's session, its codec from the id's lowest bit: the frame is
   * decoded, the body handed over as msgpack, replies encoded for the session.
   * With `ring` (the worker's outbound ring: control cells and data area), a call that succeeded
   * with frames only writes them as send records at the ring position in the `ringWrite` cell
   * and returns the position after them; when they do not all fit now, or it did anything else,
   * it returns what it returns without a ring.
   */
  pluginCallMessage(handler: number, bytes: Uint8Array, ring?: Uint8Array | null): NativeCallOutcome | number;
  /** Cuts off the native call running `eventId` (it timed out): its effects are refused. */
  pluginRevokeEvent(eventId: number): boolean;
  /**
   * Runs API hook `entry` for the request in the context cells (event, requestId, answerKind);
   * `args` a msgpack map, `label` "operation\nmethod\npath". A string is the request's
   * successful JSON answer, when that was the call's only effect (never a send's frame).
   */
  pluginCallApi(entry: number, args: Uint8Array | null, label: string): NativeCallOutcome;
  /** Runs an object continuation (once) for the event in the context cells. */
  pluginContinue(continuation: number, found: boolean, id: string, fields: Uint8Array | null): NativeCallOutcome;
  /** Forgets a continuation that will not run (its user data is released). */
  pluginDropContinuation(continuation: number): void;
  // ABI 1.2 lifecycle (src/plugins/native-lifecycle.ts); `path` names a loaded copy.
  /** Runs the copy's on_start; null when it has none. */
  pluginStart(path: string): NativeHookOutcome | null;
  /** Starts the copy's on_stop on a thread of its own with the deadline (ms since the epoch); 0: it has none, else a job. */
  pluginStopBegin(path: string, deadlineMs: number): number;
  /** The on_stop job's outcome, null while it runs; `lines` are [level, text] flattened. */
  pluginStopTake(job: number): { status: number; error: string; lines: Array<number | string> } | null;
  /** Calls the copy's timeout handlers for a timed-out event; their effects. */
  pluginTimeout(path: string, name: string, eventId: number, tag: number, sessionId: number): unknown[];
  /** Runs timer_start timer `key` (its event's payload) for the event in the context cells. */
  pluginCallTimer(key: number): NativeCallOutcome;
  /** A reload retires the copy (its timers and held user data end, then on_unload); null when retired already, else on_unload's effects. */
  pluginRetire(path: string): unknown[] | null;
  /** Ends the timers and continuations of a copy (null: every copy, at shutdown); how many pieces of user data were released. */
  pluginEndHoldings(path: string | null): number;
  // ABI 1.2 sessions and accounts (src/plugins/native-sessions.ts).
  /** The session hooks of the copy loaded from `path`: `[hook, closed]` in registration order. */
  pluginSessionHooks(path: string): Array<[number, boolean]>;
  /**
   * Runs session hook `hook` for the session event in the context cells: an opened hook with
   * (0, version, codec, address), a closed hook with (close code, reason, account | null).
   */
  pluginCallSession(hook: number, closeCode: number, a: string | null, b: string | null, c: string | null): NativeCallOutcome;
  /**
   * Runs an account continuation (once) for the event in the context cells with the answer: `code`
   * (login: GSF_LOGIN_*; logout: 1 when it was logged in), `sessionId` (login: the replaced or
   * holding session; locate: the account's, 0 none), `account` (accountOf: the answer, null none).
   */
  pluginContinueAccount(continuation: number, code: number, sessionId: number, account: string | null): NativeCallOutcome;
  /** Forgets an account continuation that will not run (its user data is released). */
  pluginDropAccountContinuation(continuation: number): void;
  /** Account continuations held now (tests). */
  pluginAccountContinuations(): number;
  /**
   * The process's session accounts, from which a native account_of is answered inside its call:
   * binds a session to its account, or unbinds it (null). The account manager keeps them.
   */
  sessionAccountSet(sessionId: number, account: string | null): void;
  /** How many sessions the session accounts bind (tests). */
  sessionAccountCount(): number;
  // ABI 1.2 declarations, result continuations and transactions (src/plugins/native-results.ts, native-transact.ts).
  /** What the copy loaded from `path` declared in init: flags `[name, GSF_FLAG_*, default msgpack, description]`, callables `[index, category, name, description]`, monitors `[category, name, threshold]`. */
  pluginDeclarations(path: string): {
    flags: Array<[string, number, Uint8Array, string]>;
    callables: Array<[number, string, string, string]>;
    monitors: Array<[string, string, number]>;
  };
  /** A native callable counter's value; undefined for none now; throws when its function failed. */
  pluginReadCounter(index: number): number | undefined;
  /** Runs a result continuation (once) for the event in the context cells with a request's answer. */
  pluginContinueResult(continuation: number, status: number, code: string, message: string, id: string, value: Uint8Array | null,
    number: number): NativeCallOutcome;
  /** Forgets a result continuation that will not run (its user data is released). */
  pluginDropResultContinuation(continuation: number): void;
  /** Runs transaction `key`'s body for the event in the context cells (an ended one runs nothing). */
  pluginRunTransaction(key: number): NativeCallOutcome;
  /** The transaction committed (status 0) or failed: runs its `done`, then releases its user data. */
  pluginFinishTransaction(key: number, status: number, code: string, message: string): NativeCallOutcome;
  /** Ends a transaction without running `done` (its event timed out), releasing its user data. */
  pluginDropTransaction(key: number): void;
  /** `[result continuations, transactions]` held now (tests). */
  pluginResultHoldings(): [number, number];
  /** The request ended: its native writer is refused from now on. */
  pluginApiRelease(requestId: number): void;
  /** Answers of events that finished on this event thread, `[requestId, httpStatus, jsonBody | null]` flattened, to the main thread. */
  pluginApiPostAnswers(answers: Array<number | string | null>): void;
  /**
   * The answers waiting for the main thread, as records of one buffer (see `readAnswers` in
   * api/pending.ts): request id, status, JSON body or none, message, and whether the status is
   * HTTP's (posted answers) or a `GSF_STATUS_*` one (native writers' answers given outside
   * their request's call).
   */
  pluginApiTakeAnswers(): Buffer;
  /** Called on this (the main) thread when such answers wait; null stops it. */
  pluginApiOnAnswers(fn: (() => void) | null): void;
  /** An event thread's session-out ring has records up to `end`, flush number `seq` (wakes the main thread if none waited). */
  flushNotePost(threadId: number, seq: number, end: number): void;
  /** Every flush note posted since the last call, `[threadId, seq, end]` flattened, in posting order. */
  flushNotesTake(): Float64Array;
  /** Called on this (the main) thread when flush notes wait; null stops it. */
  onFlushNotes(fn: (() => void) | null): void;
  // ---- shared configuration snapshot -------------------------------------------
  /** Replaces the process-wide flag snapshot (JSON text); bumps the version. */
  configSet(json: string): void;
  configGet(): string;
  configVersion(): number;
}

/**
 * Exports of the testing build (`gsf_native_testing.node`, `npm run build:testing`) only, which
 * gsf loads instead of the addon when GSF_NATIVE_TESTING=1 (the tests and benchmarks set it).
 */
export interface NativeTesting {
  /** Removes a counter (tests of handles to removed counters). */
  counterRemove(category: string, name: string): boolean;
  /**
   * What a native plugin's `object_read_cached` reads on this thread: code 0 found (`fields`,
   * msgpack), 1 no such object, 2 not answerable from the cache, 3 no such type.
   */
  objectReadCached(type: string, id: string): { code: number; fields?: Uint8Array };
  /** Runs event handler `handler` `count` times in a C++ loop; returns ns per call (benchmarks). */
  pluginBenchCalls(handler: number, count: number, payload: Uint8Array | null): number;
  /** JSON text to msgpack as JSON.parse + msgpackr.pack would give it; throws a TypeError on bad JSON. */
  jsonToMsgpack(text: string): Uint8Array;
  /** One msgpack value as JSON.stringify(msgpackr.unpack(bytes)) would write it; undefined for `undefined`. */
  msgpackToJson(bytes: Uint8Array): string | undefined;
  /** A frame {type, body (msgpack), id} for a session, as native handlers' replies are encoded. */
  pluginEncodeFrame(sessionId: number, type: string, body: Uint8Array | null, id?: number): string | Uint8Array;
  /** The native side's named tag (equal to `namedTag`). */
  pluginNamedTag(name: string): number;
  /** A random tag from the native side's generator. */
  pluginRandomTag(): number;
  /**
   * From now on the plugin host checks descriptors, and tells plugins its minor, as a gsf of ABI
   * 1.<minor> would (an older host); without an argument, this build's minor again. Returns it.
   */
  pluginHostAbiMinor(minor?: number): number;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const testing = process.env.GSF_NATIVE_TESTING === '1';

function loadAddon(): NativeCore {
  const name = testing ? 'gsf_native_testing.node' : 'gsf_native.node';
  const candidates = [
    path.join(here, '..', 'build', 'addon', 'Release', name),
    path.join(here, '..', 'build', 'Release', name),
  ];
  let lastError: unknown;
  for (const file of candidates) {
    try {
      // The addon's exports object holds its functions in dictionary mode (too many added at
      // run time); a copy made by spreading has fast properties, so `native.take(...)` and the
      // like are plain inline-cached loads.
      return { ...(require(file) as NativeCore) };
    } catch (err) {
      lastError = err;
    }
  }
  const how = testing ? 'npm run build:testing builds it; unset GSF_NATIVE_TESTING for the addon npm install builds' : 'run npm install';
  throw new Error(`gsf: the native addon ${name} is not built (${how}): ${String(lastError)}`);
}

/** The testing build's exports; throws unless gsf runs with GSF_NATIVE_TESTING=1. */
export function nativeTesting(): NativeCore & NativeTesting {
  if (!testing) throw new Error('gsf: the testing exports need GSF_NATIVE_TESTING=1 and the testing build (npm run build:testing)');
  return native as NativeCore & NativeTesting;
}

/** The process-global native core. */
export const native: NativeCore = loadAddon();

// The layout constants above are copies of the addon's: a stale build must not be misread.
{
  const built = native.layout();
  const ours = {
    takeStride: TAKE_STRIDE, pushStride: PUSH_STRIDE, completeStride: COMPLETE_STRIDE, progressStride: PROGRESS_STRIDE,
    take: TakeField, push: PushField, complete: CompleteField, progress: ProgressField, flags: CompleteFlag,
    parkHintHandlers: PARK_HINT_HANDLERS,
  };
  if (JSON.stringify(built) !== JSON.stringify(ours)) {
    throw new Error(`gsf: the native addon was built with another layout (run npm install to rebuild it): ${JSON.stringify(built)}`);
  }
  checkEnums(native.enumLayout());
}

/** Refuses an addon whose enums differ from this file's copies, naming the first that does. */
export function checkEnums(built: Record<string, unknown>): void {
  const ours: Record<string, unknown> = {
    eventKind: EventKind, completeResult: CompleteResult, profileOrder: ProfileOrder, effectKind: EffectKind,
    contextCell: ContextCell, contextCells: CONTEXT_CELLS, runState: RunState,
  };
  for (const [name, value] of Object.entries(ours)) {
    const theirs = built[name];
    const sorted = (v: unknown) => (typeof v === 'object' && v !== null
      ? JSON.stringify(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : JSON.stringify(v));
    if (sorted(theirs) !== sorted(value)) {
      throw new Error(`gsf: the native addon was built with another ${name} (run npm install to rebuild it): ` +
        `addon ${JSON.stringify(theirs)}, src/native.ts ${JSON.stringify(value)}`);
    }
  }
}
