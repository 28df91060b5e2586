/**
 * The native plugin host's side of the native core (re-exported by `native.ts`, whose
 * `NativeCore` includes `NativePluginHost`): status codes, the effects a native call hands back,
 * the call context cells, what a call returns, and the host's functions (loading, calls,
 * lifecycle, sessions and accounts, results, transactions, API answers).
 */

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
  /** An invoke and a timer of the call's event, held with its effects (src/plugins/native-held.ts). */
  invoke: 40, timer: 41,
} as const;
// ABI 1.1 records: `[apiAnswer, requestId, status, jsonBody | null, message]` (an answer of the
// call handling the request), `[objectFetch, continuation, type, id, mode]`,
// `[objectFetchBy, continuation, type, field, keyMsgpack, mode]`, `[objectSet, type, id, fieldsMsgpack]`,
// `[objectHeld, type, id, version, storedFieldsMsgpack]` (the event's copy is made from it).
// ABI 1.0 invokes and timers of an event: `[invoke, id, tag, sessionId, nameId, handlerId, payload | null]`,
// `[timer, id, delayMs, intervalMs, nameId, handlerId, payload | null]` (ids reserved by the addon).
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
export const CONTEXT_CELLS = 21;
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
  /** Set to 1 by a call that replied to its message; read and cleared after the call (`countCachedReads`). */
  replied: 19,
  /**
   * The event's child count (`RunningEvent.children`): written before a call, and after it what
   * the call brought it to, so that a continuation names its children on from there (SPEC 6.3).
   */
  children: 20,
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

/** The addon's native plugin host: the functions of `NativeCore` that load and call native plugins. */
export interface NativePluginHost {
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
  /** Where native log lines outside a call go: the server log's descriptor, whether it is JSON lines, the manifest's minloglevel. */
  logTarget(fd: number, json: boolean, minloglevel: number, alsoStderr: boolean): void;
  /** Whether plugin threads' invokes and timers (gsf_no_call()) are taken: from a start until its stop has run the stop hooks. */
  pluginOutsideCalls(open: boolean): void;
  /** Releases the continuations a failed event still holds (none of them will run). */
  pluginDropContinuations(eventId: number): void;
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
  /** gsf stops waiting for an on_stop past its deadline: the lines it logged so far; later ones go to the server's log. */
  pluginStopAbandon(job: number): Array<number | string>;
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
  /**
   * A login or logout an event thread sent the account manager (+1), answered (-1): while any is
   * on its way, a native account_of goes to the account manager instead.
   */
  sessionAccountChanging(delta: 1 | -1): void;
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
  /** Whether the request's native writer has answered (the answer may have gone with a timed-out call's effects). */
  pluginApiAnswered(requestId: number): boolean;
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
}
