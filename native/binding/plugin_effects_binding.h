// Shared by the native-plugin bindings: one call's effects collected on this thread and handed
// back to JavaScript as one flat array, the call context cells, and a call's result.
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "../core/plugin_effects.h"
#include "../core/plugin_host.h"

namespace gsf::binding {

/** Effect codes in the returned array (EffectKind in src/native.ts). */
enum EffectCode {
  kSend = 1, kPublish = 2, kLog = 3, kApiAnswer = 4, kObjectFetch = 5, kObjectFetchBy = 6, kObjectSet = 7,
  // An object the call fetched for write, answered from the cache inside the call (in_call_answers.h).
  kObjectHeld = 8,
  // ABI 1.2 sessions and accounts (plugin_sessions.cc).
  kSessionGroup = 20, kSessionClose = 21, kBroadcast = 22, kAccountRequest = 23,
  // ABI 1.2 objects, cluster and authenticator requests (plugin_results.h).
  kServiceRequest = 30,
  // An invoke and a timer of the call's event, held with its effects (PluginEffects::Invoke, Timer).
  kInvoke = 40, kTimer = 41,
};

struct Effect {
  EffectCode code;
  uint64_t session;  // kSend: the session; kApiAnswer: the request; object fetches: the continuation
  int level;         // kLog: the level; kPublish: the JSON frame's length; kApiAnswer: the status; objects: the mode
  double version = 0;  // kObjectHeld: the cached version the call saw; kTimer: the delay
  double interval = 0;  // kTimer: the interval
  bool binary;       // kSend: msgpack; kApiAnswer: has a body
  std::string a, b, c;
  std::vector<uint64_t> ids;  // kBroadcast: the sessions (`binary` true: every session); kInvoke: id, tag, session,
                              // name id, handler id; kTimer: id, name id, handler id
};

/** Collects one call's effects on this thread; the list is reused from call to call. */
struct CollectingEffects : PluginEffects {
  std::vector<Effect> list;
  size_t used = 0;

  Effect& Next(EffectCode code);
  void Send(uint64_t session, std::string_view frame, bool binary) override;
  void Publish(std::string_view group, std::string_view json, std::string_view msgpack) override;
  void Log(int level, std::string_view line) override;
  void ApiAnswer(uint64_t rid, int32_t status, std::string_view body, bool has_body, std::string_view message) override;
  void ObjectRequest(int op, uint64_t continuation, std::string_view type, std::string_view name, std::string_view bytes,
                     uint32_t mode) override;
  void SessionGroup(uint64_t session, std::string_view group, bool join) override;
  void SessionClose(uint64_t session, std::string_view reason) override;
  void Broadcast(const uint64_t* ids, size_t count, std::string_view json, std::string_view msgpack) override;
  void AccountRequest(uint32_t op, uint64_t continuation, std::string_view account, uint64_t session) override;
  void ServiceRequest(uint32_t op, uint64_t continuation, std::string_view args) override;
  void Invoke(const HeldPush& push) override;
  void Timer(const HeldTimerStart& timer) override;
};

/**
 * Whether the call's effects are only held invokes and timers (or none): a call of an event that
 * holds no objects and succeeded may then make them itself (ApplyHeld), with no JavaScript.
 */
bool OnlyHeld(const CollectingEffects& fx);
/** Makes the held invokes and timers among effects [from, used) now. */
void ApplyHeld(const CollectingEffects& fx, size_t from = 0);
/** Drops the held timers among effects [from, used) (their reserved ids, timer_start user data). */
void DropHeld(const CollectingEffects& fx, size_t from = 0);

/** This thread's collector, emptied. */
CollectingEffects& Collector();

/** The effects as the flat array native.ts describes. */
Napi::Array EffectsToJs(Napi::Env env, const CollectingEffects& fx);

/**
 * The call context cells of this thread (kContextCells doubles): JavaScript writes the event's
 * fields there before a call instead of passing them as arguments, which keeps the hot calls at
 * few arguments (node-addon-api allocates for more than six). Never freed: a worker's view may
 * outlive its thread's exit by a little, and a few bytes per thread ever made do not matter.
 * An API call reads its request id and writer kind from the frame cells; a message call given
 * the worker's outbound ring reads its write position from kRingWrite.
 */
constexpr size_t kContextCells = 21;
enum ContextCell {
  kEventId = 0, kTag, kKind, kSessionId, kNameId, kFrameStart, kFrameEnd, kRingWrite,
  // 1 when the cache may answer the call's object fetches in native code (in_call_answers.h);
  // the reads it answered, and how many of them found no object, come back in the next two.
  kObjectReads, kReadsAnswered, kReadsNone,
  // 1 when this process's session accounts may answer the call's account_of (no account call
  // of the event is on its way).
  kAccountReads,
  // pluginRunEvents (plugin_event_run_binding.cc): the slot, the claim's range, the last started
  // index and the first event's start (ms after the claim) in; the next index, the last started
  // index and how the run ended (kRunAll, kRunStopped, kRunRevoked) out.
  kRunSlot, kRunFrom, kRunTo, kRunStarted, kRunStartMs, kRunNext, kRunState,
  // Set to 1 by a call that replied to its message (JavaScript reads and clears it after the
  // call): a later failure of that message's handler or continuations is then not answered.
  kReplied,
  // The event's child count: in, before the call (what its earlier calls created); out, after
  // it (NoteCall), so that its next call names its children on from there (SPEC 6.3).
  kChildren,
};
/** How pluginRunEvents ended, in kRunState. */
enum RunState { kRunAll = 0, kRunStopped = 1, kRunRevoked = 2 };
constexpr ContextCell kRequestId = kFrameStart;
constexpr ContextCell kAnswerKind = kFrameEnd;
double* ContextCells();
EventContext EventFromCells(const double* c);
/** Writes what the call `r` tells JavaScript through the cells: whether it replied, the event's child count. */
void NoteCall(const CallResult& r);

/**
 * What a call gives back: null when it succeeded with nothing to apply; the frame itself when
 * it succeeded with exactly one frame for its own session (a reply, the common case); the
 * effects array when it succeeded with others; else {status, error, effects, decodeFailed,
 * messageId?}.
 */
Napi::Value ResultToJs(Napi::Env env, const CallResult& r, CollectingEffects& fx, uint64_t session);

/**
 * ResultToJs for an API hook's call answering request `rid`: when its only effect is that
 * request's successful answer with a JSON body and no message (a read, the common case), the
 * body string alone; otherwise what ResultToJs gives, but never a send's frame alone (a string
 * here is always the answer).
 */
Napi::Value ApiResultToJs(Napi::Env env, const CallResult& r, CollectingEffects& fx, uint64_t rid);

/** Bytes copied into a new Buffer. */
Napi::Value Bytes(Napi::Env env, std::string_view bytes);

}  // namespace gsf::binding
