/**
 * Typed view of the native core (`native/binding` over `native/core`): the addon's functions
 * (`NativeCore`), its loader and the check of its layouts at load. The data shapes are in
 * `native-types.ts` and the plugin host's part in `native-plugin-host.ts`; this file re-exports
 * both, so importers need only this one.
 *
 * The addon is loaded in the main thread and in every event worker; its state is
 * process-global, so every function here may be called from any thread at once.
 * Numbers that are 64-bit in C++ (event ids, tags, session ids, integer counters)
 * cross as JS numbers and stay below 2^53.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import * as shapes from './native-types.ts';
import * as host from './native-plugin-host.ts';
import type {
  CancelledEvent, CounterValue, NativeLayout, ObjectCacheStats, ProfileEvent, ProfileHistograms, ProfileOrderValue,
  ProfileSummary, QueueStats, SlotState, TimeoutOutcome,
} from './native-types.ts';
import type { NativePluginHost } from './native-plugin-host.ts';

// Re-exported as constants of this module, not with `export … from`: under the CommonJS
// transform event workers load with, module exports are getters, and a re-export would be a
// getter calling the other module's getter, on paths that read these per event.
export const {
  EventKind, NULL_TAG, TIMER_TAG, TAKE_STRIDE, TakeField, PUSH_STRIDE, PushField, COMPLETE_STRIDE, CompleteField,
  PROGRESS_STRIDE, ProgressField, PARK_HINT_HANDLERS, CompleteFlag, CompleteResult, ProfileOrder,
} = shapes;
export const { NativeStatus, NATIVE_STATUS_NAMES, EffectKind, CONTEXT_CELLS, ContextCell, RunState } = host;
export type {
  EventKindValue, ProfileOrderValue, ProfileSummaryWindow, ProfileSummary, ProfileEventWindow, ProfileEvent,
  LatencyHistogram, EventHistograms, ProfileHistograms, QueueStats, SlotState, CancelledEvent, TimeoutOutcome,
  NativeLayout, CounterValue, ObjectCacheStats,
} from './native-types.ts';
export type {
  NativeApiRegistrations, NativePluginInfo, NativeHookOutcome, NativeCallOutcome, NativeCallResult, NativePluginHost,
} from './native-plugin-host.ts';

/** The addon's functions; those of the native plugin host are in `NativePluginHost`. */
export interface NativeCore extends NativePluginHost {
  /** Interns a string (event or handler name) to a process-wide id >= 1; same string, same id. */
  intern(name: string): number;
  /** The id of a name an event is given: bounded in number (native/core/name_table.h). */
  internEventName(name: string): number;
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
  /**
   * Answers client messages whose events never finish in their place (TagQueue::
   * SetAnsweredMessages): an event of `handlerId` that times out, is cancelled with its tag, or is
   * abandoned or lost with its thread is queued again first on its tag, named `answerNameId`, its
   * payload after a byte saying why; one named `answerNameId` or `keepNameId` as it is.
   * `onTimeout`: timed-out and cancelled ones too. A `handlerId` of 0 turns it off.
   */
  setAnsweredMessages(handlerId: number, answerNameId: number, keepNameId: number, onTimeout: boolean): void;
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
   * front of their tags in order; a begun but uncompleted event is dropped (`lost`); its parked
   * events are abandoned (their tags freed). `requeued` is -1 if the thread had no slot.
   */
  slotReleaseThread(threadId: number): { requeued: number; abandoned: CancelledEvent[]; lost: CancelledEvent | null };
  /** Whether worker thread `threadId` holds a slot (it serves; false once it has been released). */
  threadHasSlot(threadId: number): boolean;
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
    payload: Uint8Array | null, reservedId?: number): number;
  /** An id for a timer an event holds until its run ends (`timerAdd` with it, or `timerRelease`). */
  timerReserve(): number;
  /** Lets a reserved id go without a timer. */
  timerRelease(id: number): void;
  /** Cancels a timer; false if unknown or already fired (one-shot). */
  timerCancel(id: number): boolean;
  /** Pushes every due timer onto TIMER_TAG; returns ms until the next due timer, or -1. */
  timerFire(): number;
  /** Periods repeating timers skipped since start: the timer tag had TimerStore::kMaxBacklog events waiting. */
  timerSkipped(): number;
  /** A server stop began: timers added from now on are not started (`timerAdd` returns 0) until `queueReset`. */
  timersStop(): void;
  /** Timers `timerAdd` did not start because the server was stopping, since the process began. */
  timersRefusedAtStop(): number;

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

  // ---- session-out flush notes -------------------------------------------------
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

// The layout constants (native-types.ts) are copies of the addon's: a stale build must not be misread.
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

/** Refuses an addon whose enums differ from the copies this file exports, naming the first that does. */
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
