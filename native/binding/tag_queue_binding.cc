// Hot path: push/take/begin/complete exchange data through caller-owned typed
// arrays and return plain numbers, so no JS object is made per event.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../core/runtime.h"
#include "../core/plugin_lifecycle.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

Napi::Value Push(const Napi::CallbackInfo& info) {
  EventInput in;
  in.tag = UintArg(info, 0, "tag");
  in.name_id = IdArg(info, 1, "nameId");
  in.handler_id = IdArg(info, 2, "handlerId");
  in.session_id = UintArg(info, 3, "sessionId");
  in.kind = static_cast<uint8_t>(IntegerArg(info, 4, "kind", 0, 255));
  ByteView payload = BytesArg(info, 5, "payload", true);
  in.payload = payload.data;
  in.payload_len = payload.length;
  if (info.Length() > 6) in.id = UintArg(info, 6, "id");
  const uint64_t id = ProcessRuntime().queue.Push(in);
  // JavaScript wakes a worker itself after a push (wake.ts workReady).
  TagQueue::TakeOwnReadyPushes();
  return Napi::Number::New(info.Env(), static_cast<double>(id));
}

// reserveEventId(count = 1): the first of `count` consecutive ids for events pushed later.
Napi::Value ReserveEventId(const Napi::CallbackInfo& info) {
  const uint64_t count = info.Length() > 0 ? static_cast<uint64_t>(IntegerArg(info, 0, "count", 1, 1 << 20)) : 1;
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().queue.ReserveIds(count)));
}

bool IsInteger(double v, double max) { return v >= 0 && v <= max && std::trunc(v) == v; }

// records: kPushStride values per event (tag, nameId, handlerId, sessionId, kind, payloadLength);
// the payloads follow one another in `bytes` from offset 0.
Napi::Value PushBatch(const Napi::CallbackInfo& info) {
  DoubleView records = Float64Arg(info, 0, "records");
  size_t count = static_cast<size_t>(IntegerArg(info, 1, "count", 0, kMaxSafeInteger));
  ByteView bytes = BytesArg(info, 2, "bytes", false);
  if (count > records.length / kPushStride) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "records must hold PUSH_STRIDE values for each of the count events");
  }
  thread_local std::vector<EventInput> inputs;
  inputs.resize(count);
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    const double* r = records.data + i * kPushStride;
    if (!IsInteger(r[kPushTag], kMaxSafeInteger) || !IsInteger(r[kPushNameId], 4294967295.0) ||
        !IsInteger(r[kPushHandlerId], 4294967295.0) || !IsInteger(r[kPushSessionId], kMaxSafeInteger) ||
        !IsInteger(r[kPushKind], 255) || !IsInteger(r[kPushPayloadLength], kMaxSafeInteger)) {
      ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "pushBatch: a record holds a value out of range");
    }
    size_t length = static_cast<size_t>(r[kPushPayloadLength]);
    if (length > bytes.length - offset) {
      ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "pushBatch: the payload lengths exceed bytes");
    }
    EventInput& in = inputs[i];
    in.tag = static_cast<uint64_t>(r[kPushTag]);
    in.name_id = static_cast<uint32_t>(r[kPushNameId]);
    in.handler_id = static_cast<uint32_t>(r[kPushHandlerId]);
    in.session_id = static_cast<uint64_t>(r[kPushSessionId]);
    in.kind = static_cast<uint8_t>(r[kPushKind]);
    in.payload = bytes.data + offset;
    in.payload_len = length;
    offset += length;
  }
  // firstId: ids reserved with reserveEventId(count) for these events, in order.
  const uint64_t first_id = info.Length() > 3 && !info[3].IsUndefined() ? UintArg(info, 3, "firstId") : 0;
  const uint64_t first = ProcessRuntime().queue.PushBatch(inputs.data(), count, first_id);
  TagQueue::TakeOwnReadyPushes();  // as in Push
  return Napi::Number::New(info.Env(), static_cast<double>(first));
}

Napi::Value Take(const Napi::CallbackInfo& info) {
  int slot = SlotArg(info, 0);
  DoubleView meta = Float64Arg(info, 1, "meta");
  ByteView bytes = BytesArg(info, 2, "bytes", false);
  double max = IntegerArg(info, 3, "max", 0, kMaxSafeInteger);
  size_t n = std::min(static_cast<size_t>(max), meta.length / kTakeStride);
  int64_t r = ProcessRuntime().queue.Take(slot, meta.data, n, bytes.data, bytes.length);
  return Napi::Number::New(info.Env(), static_cast<double>(r));
}

// The slots' progress cells (process-lifetime memory): a worker marks its claimed events
// started there with Atomics on an Int32Array, with no call per event.
Napi::Value SlotProgressView(const Napi::CallbackInfo& info) {
  std::atomic<int32_t>* cells = ProcessRuntime().queue.ProgressCells();
  return Napi::ArrayBuffer::New(info.Env(), static_cast<void*>(cells),
                                sizeof(std::atomic<int32_t>) * TagQueue::kMaxSlots * kProgressStride);
}

// Which handlers' events usually park (process-lifetime memory, one byte per handler id):
// workers set and clear them with plain stores, Take reads them (park_hints.h).
Napi::Value ParkHintsView(const Napi::CallbackInfo& info) {
  return Napi::ArrayBuffer::New(info.Env(), static_cast<void*>(ProcessRuntime().queue.Hints().Cells()),
                                sizeof(std::atomic<uint8_t>) * ParkHints::kHandlers);
}

Napi::Value Complete(const Napi::CallbackInfo& info) {
  int slot = SlotArg(info, 0);
  size_t count = static_cast<size_t>(IntegerArg(info, 1, "count", 0, kMaxSafeInteger));
  DoubleView timings = Float64Arg(info, 2, "timings");
  if (count > timings.length / kCompleteStride) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument,
               "timings must hold COMPLETE_STRIDE values for each of the count events");
  }
  return Napi::Number::New(info.Env(), ProcessRuntime().queue.Complete(slot, count, timings.data));
}

Napi::Value Park(const Napi::CallbackInfo& info) {
  int slot = SlotArg(info, 0);
  double index = IntegerArg(info, 1, "index", 0, kMaxSafeInteger);
  uint32_t name_id = IdArg(info, 2, "nameId");
  return Napi::Boolean::New(info.Env(), ProcessRuntime().queue.Park(slot, static_cast<size_t>(index), name_id));
}

// timing: one kCompleteStride record at `offset` records into the array.
Napi::Value FinishParked(const Napi::CallbackInfo& info) {
  uint64_t event_id = UintArg(info, 0, "eventId");
  DoubleView timings = Float64Arg(info, 1, "timings");
  size_t index = static_cast<size_t>(IntegerArg(info, 2, "index", 0, kMaxSafeInteger));
  if (index >= timings.length / kCompleteStride) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "finishParked: index is past the timings");
  }
  return Napi::Number::New(info.Env(),
                           ProcessRuntime().queue.FinishParked(event_id, timings.data + index * kCompleteStride));
}

Napi::Value SettleParked(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), ProcessRuntime().queue.SettleParked(UintArg(info, 0, "eventId")));
}

Napi::Value RenameParked(const Napi::CallbackInfo& info) {
  ProcessRuntime().queue.RenameParked(UintArg(info, 0, "eventId"), IdArg(info, 1, "nameId"));
  return info.Env().Undefined();
}

Napi::Value TimeoutParked(const Napi::CallbackInfo& info) {
  std::vector<DroppedEvent> dropped;
  uint32_t name_id = 0;
  DroppedEvent event{};
  if (!ProcessRuntime().queue.TimeoutParked(UintArg(info, 0, "eventId"), &dropped, &name_id, &event)) {
    return info.Env().Null();
  }
  ProcessNativeTimers().RunsCancelled(dropped);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("event", DroppedEventToJs(info.Env(), event));
  o.Set("dropped", DroppedToJs(info.Env(), dropped));
  o.Set("abandoned", Napi::Array::New(info.Env(), 0));
  o.Set("nameId", static_cast<double>(name_id));
  return o;
}

// (handlerId, answerNameId, keepNameId, onTimeout): see TagQueue::SetAnsweredMessages.
Napi::Value SetAnsweredMessages(const Napi::CallbackInfo& info) {
  const auto id = [&](size_t i, const char* what) {
    return static_cast<uint32_t>(IntegerArg(info, i, what, 0, UINT32_MAX));
  };
  ProcessRuntime().queue.SetAnsweredMessages(id(0, "handlerId"), id(1, "answerNameId"), id(2, "keepNameId"),
                                              info.Length() > 3 && info[3].ToBoolean().Value());
  return info.Env().Undefined();
}

Napi::Value ParkedOf(const Napi::CallbackInfo& info) {
  std::vector<uint64_t> ids = ProcessRuntime().queue.ParkedOf(SlotArg(info, 0));
  Napi::Array out = Napi::Array::New(info.Env(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out.Set(static_cast<uint32_t>(i), static_cast<double>(ids[i]));
  return out;
}

// The layout of the arrays exchanged with Take, PushBatch and Complete, and of the progress
// cells: src/native.ts checks its copies against these at load.
Napi::Value Layout(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("takeStride", static_cast<double>(kTakeStride));
  o.Set("pushStride", static_cast<double>(kPushStride));
  o.Set("completeStride", static_cast<double>(kCompleteStride));
  o.Set("progressStride", static_cast<double>(kProgressStride));
  Napi::Object take = Napi::Object::New(env);
  take.Set("id", static_cast<double>(kTakeId));
  take.Set("tag", static_cast<double>(kTakeTag));
  take.Set("nameId", static_cast<double>(kTakeNameId));
  take.Set("handlerId", static_cast<double>(kTakeHandlerId));
  take.Set("sessionId", static_cast<double>(kTakeSessionId));
  take.Set("kind", static_cast<double>(kTakeKind));
  take.Set("payloadOffset", static_cast<double>(kTakePayloadOffset));
  take.Set("payloadLength", static_cast<double>(kTakePayloadLength));
  take.Set("queueAgeMs", static_cast<double>(kTakeQueueAgeMs));
  o.Set("take", take);
  Napi::Object push = Napi::Object::New(env);
  push.Set("tag", static_cast<double>(kPushTag));
  push.Set("nameId", static_cast<double>(kPushNameId));
  push.Set("handlerId", static_cast<double>(kPushHandlerId));
  push.Set("sessionId", static_cast<double>(kPushSessionId));
  push.Set("kind", static_cast<double>(kPushKind));
  push.Set("payloadLength", static_cast<double>(kPushPayloadLength));
  o.Set("push", push);
  Napi::Object complete = Napi::Object::New(env);
  complete.Set("handlerMs", static_cast<double>(kHandlerMs));
  complete.Set("ioWaitMs", static_cast<double>(kIoWaitMs));
  complete.Set("nameId", static_cast<double>(kNameId));
  complete.Set("flags", static_cast<double>(kFlags));
  complete.Set("rollbacks", static_cast<double>(kRollbacks));
  complete.Set("objectCreateCount", static_cast<double>(kObjectCreateCount));
  complete.Set("objectCount", static_cast<double>(kObjectCount));
  complete.Set("objectCacheHitRate", static_cast<double>(kObjectCacheHitRate));
  complete.Set("objectNolockRate", static_cast<double>(kObjectNolockRate));
  complete.Set("objectLeaseRate", static_cast<double>(kObjectLeaseRate));
  complete.Set("objectNullRate", static_cast<double>(kObjectNullRate));
  complete.Set("startMs", static_cast<double>(kStartMs));
  o.Set("complete", complete);
  Napi::Object progress = Napi::Object::New(env);
  progress.Set("index", static_cast<double>(kProgressIndex));
  progress.Set("startUs", static_cast<double>(kProgressStartUs));
  progress.Set("nameId", static_cast<double>(kProgressNameId));
  o.Set("progress", progress);
  Napi::Object flags = Napi::Object::New(env);
  flags.Set("failed", static_cast<double>(kFlagFailed));
  flags.Set("notRun", static_cast<double>(kFlagNotRun));
  o.Set("flags", flags);
  o.Set("parkHintHandlers", static_cast<double>(ParkHints::kHandlers));
  return o;
}

}  // namespace

int SlotArg(const Napi::CallbackInfo& info, size_t i) {
  return static_cast<int>(IntegerArg(info, i, "slot", 0, TagQueue::kMaxSlots - 1));
}

namespace {

Napi::Object EventToJs(Napi::Env env, uint64_t id, uint64_t tag, uint32_t name_id, uint64_t session_id) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", static_cast<double>(id));
  o.Set("tag", static_cast<double>(tag));
  o.Set("nameId", static_cast<double>(name_id));
  o.Set("sessionId", static_cast<double>(session_id));
  return o;
}

}  // namespace

Napi::Object DroppedEventToJs(Napi::Env env, const DroppedEvent& d) {
  return EventToJs(env, d.id, d.tag, d.name_id, d.session_id);
}

Napi::Array DroppedToJs(Napi::Env env, const std::vector<DroppedEvent>& dropped) {
  Napi::Array out = Napi::Array::New(env, dropped.size());
  for (size_t i = 0; i < dropped.size(); ++i) out.Set(static_cast<uint32_t>(i), DroppedEventToJs(env, dropped[i]));
  return out;
}

Napi::Array AbandonedToJs(Napi::Env env, const std::vector<AbandonedEvent>& abandoned) {
  Napi::Array out = Napi::Array::New(env, abandoned.size());
  for (size_t i = 0; i < abandoned.size(); ++i) {
    const AbandonedEvent& a = abandoned[i];
    out.Set(static_cast<uint32_t>(i), EventToJs(env, a.id, a.tag, a.name_id, a.session_id));
  }
  return out;
}

namespace {

Napi::Value Waiting(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().queue.Waiting()));
}

Napi::Value Ready(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().queue.ReadyTags()));
}

// A stopping server drops what has not started yet; timers first, so none
// fires into the queue after it was emptied.
Napi::Value QueueReset(const Napi::CallbackInfo& info) {
  Runtime& rt = ProcessRuntime();
  rt.timers.Clear();
  rt.queue.DropAllQueued();
  rt.queue.Hints().Clear();
  return info.Env().Undefined();
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  QueueStats st = ProcessRuntime().queue.Stats();
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("inflow_per_sec", static_cast<double>(st.inflow_per_sec));
  o.Set("throughput_per_sec", static_cast<double>(st.throughput_per_sec));
  o.Set("waiting", static_cast<double>(st.waiting));
  o.Set("outstanding", static_cast<double>(st.outstanding));
  o.Set("pushed_total", static_cast<double>(st.pushed_total));
  o.Set("completed_total", static_cast<double>(st.completed_total));
  o.Set("cancelled_total", static_cast<double>(st.cancelled_total));
  return o;
}

}  // namespace

void TagQueueBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<Push>(env, exports, "push");
  Export<ReserveEventId>(env, exports, "reserveEventId");
  Export<PushBatch>(env, exports, "pushBatch");
  Export<Take>(env, exports, "take");
  Export<SlotProgressView>(env, exports, "slotProgressView");
  Export<ParkHintsView>(env, exports, "parkHintsView");
  Export<Complete>(env, exports, "complete");
  Export<Park>(env, exports, "park");
  Export<FinishParked>(env, exports, "finishParked");
  Export<SettleParked>(env, exports, "settleParked");
  Export<RenameParked>(env, exports, "renameParked");
  Export<TimeoutParked>(env, exports, "timeoutParked");
  Export<ParkedOf>(env, exports, "parkedOf");
  Export<SetAnsweredMessages>(env, exports, "setAnsweredMessages");
  Export<Layout>(env, exports, "layout");
  Export<Waiting>(env, exports, "waiting");
  Export<Ready>(env, exports, "ready");
  Export<QueueReset>(env, exports, "queueReset");
  Export<Stats>(env, exports, "queueStats");
}

}  // namespace gsf::binding
