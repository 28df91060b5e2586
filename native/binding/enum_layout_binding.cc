// The enums TypeScript copies from C++ (src/native.ts), handed over so that a stale or edited
// copy is refused at load instead of misread at run time.
#include <napi.h>

#include "../core/profiler.h"
#include "../core/tag_queue.h"
#include "../include/gsf_plugin.h"
#include "bindings.h"
#include "boundary.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

using Pair = std::pair<const char*, double>;

Napi::Object Enum(Napi::Env env, std::initializer_list<Pair> values) {
  Napi::Object o = Napi::Object::New(env);
  for (const auto& [name, value] : values) o.Set(name, value);
  return o;
}

Napi::Value EnumLayout(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("eventKind", Enum(env, {{"user", GSF_EVENT_USER}, {"network", GSF_EVENT_NETWORK}, {"timer", GSF_EVENT_TIMER},
                                {"engine", GSF_EVENT_ENGINE}, {"api", GSF_EVENT_API}}));
  o.Set("completeResult",
        Enum(env, {{"revoked", kCompleteRevoked}, {"done", kCompleteDone}, {"madeReady", kCompleteMadeReady}}));
  using PO = ProfileOrder;
  o.Set("profileOrder", Enum(env, {{"none", static_cast<double>(PO::kName)},
                                   {"executionTimeSum", static_cast<double>(PO::kExecutionSum)},
                                   {"handlerTimeSum", static_cast<double>(PO::kHandlerSum)},
                                   {"ioWaitTimeSum", static_cast<double>(PO::kIoWaitSum)},
                                   {"executionTime", static_cast<double>(PO::kExecutionMean)},
                                   {"handlerTime", static_cast<double>(PO::kHandlerMean)},
                                   {"ioWaitTime", static_cast<double>(PO::kIoWaitMean)}}));
  o.Set("effectKind", Enum(env, {{"send", kSend}, {"publish", kPublish}, {"log", kLog}, {"apiAnswer", kApiAnswer},
                                 {"objectFetch", kObjectFetch}, {"objectFetchBy", kObjectFetchBy},
                                 {"objectSet", kObjectSet}, {"objectHeld", kObjectHeld}, {"sessionGroup", kSessionGroup}, {"sessionClose", kSessionClose},
                                 {"broadcast", kBroadcast}, {"accountRequest", kAccountRequest},
                                 {"serviceRequest", kServiceRequest}, {"invoke", kInvoke}, {"timer", kTimer}}));
  o.Set("contextCell", Enum(env, {{"eventId", kEventId}, {"tag", kTag}, {"kind", kKind}, {"sessionId", kSessionId},
                                  {"nameId", kNameId}, {"frameStart", kFrameStart}, {"frameEnd", kFrameEnd},
                                  {"requestId", kRequestId}, {"answerKind", kAnswerKind}, {"ringWrite", kRingWrite},
                                  {"objectReads", kObjectReads}, {"readsAnswered", kReadsAnswered},
                                  {"readsNone", kReadsNone}, {"accountReads", kAccountReads},
                                  {"runSlot", kRunSlot}, {"runFrom", kRunFrom}, {"runTo", kRunTo},
                                  {"runStarted", kRunStarted}, {"runStartMs", kRunStartMs}, {"runNext", kRunNext},
                                  {"runState", kRunState}, {"replied", kReplied},
                                  {"children", kChildren}}));
  o.Set("runState", Enum(env, {{"all", kRunAll}, {"stopped", kRunStopped}, {"revoked", kRunRevoked}}));
  o.Set("contextCells", static_cast<double>(kContextCells));
  return o;
}

}  // namespace

void EnumLayoutBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<EnumLayout>(env, exports, "enumLayout");
}

}  // namespace gsf::binding
