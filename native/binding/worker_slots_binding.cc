#include <cstdio>
#include <cstdlib>

#include "../core/runtime.h"
#include "../core/plugin_lifecycle.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

Napi::Value SlotRegister(const Napi::CallbackInfo& info) {
  double thread_id = NumberArg(info, 0, "threadId");
  return Napi::Number::New(info.Env(), ProcessRuntime().queue.SlotRegister(thread_id));
}

Napi::Value SlotAttachTask(const Napi::CallbackInfo& info) {
  int slot = SlotArg(info, 0);
  double task_id = NumberArg(info, 1, "taskId");
  ProcessRuntime().queue.SlotAttachTask(slot, task_id);
  return info.Env().Undefined();
}

Napi::Value SlotReleaseThread(const Napi::CallbackInfo& info) {
  double thread_id = NumberArg(info, 0, "threadId");
  std::vector<AbandonedEvent> abandoned;
  DroppedEvent lost{};
  int64_t requeued = ProcessRuntime().queue.SlotReleaseThread(thread_id, &abandoned, &lost);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("requeued", static_cast<double>(requeued));
  o.Set("abandoned", AbandonedToJs(info.Env(), abandoned));
  o.Set("lost", lost.id == 0 ? info.Env().Null() : Napi::Value(DroppedEventToJs(info.Env(), lost)));
  return o;
}

Napi::Value ThreadHasSlot(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), ProcessRuntime().queue.ThreadHasSlot(NumberArg(info, 0, "threadId")));
}

Napi::Value SlotRetireThread(const Napi::CallbackInfo& info) {
  double thread_id = NumberArg(info, 0, "threadId");
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().queue.SlotRetireThread(thread_id)));
}

Napi::Value SlotsRunning(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<RunningSlot> running = ProcessRuntime().queue.SlotsRunning();
  Napi::Array out = Napi::Array::New(env, running.size());
  for (size_t i = 0; i < running.size(); ++i) {
    const RunningSlot& r = running[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("slot", r.slot);
    o.Set("threadId", r.thread_id);
    o.Set("taskId", r.task_id);
    o.Set("eventId", static_cast<double>(r.event_id));
    o.Set("tag", static_cast<double>(r.tag));
    o.Set("nameId", static_cast<double>(r.name_id));
    o.Set("sessionId", static_cast<double>(r.session_id));
    o.Set("kind", static_cast<double>(r.kind));
    o.Set("elapsedMs", r.elapsed_ms);
    o.Set("parked", r.parked);
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

Napi::Value TimeoutSlot(const Napi::CallbackInfo& info) {
  int slot = SlotArg(info, 0);
  uint64_t event_id = UintArg(info, 1, "eventId");
  std::vector<DroppedEvent> dropped;
  std::vector<AbandonedEvent> abandoned;
  uint32_t name_id = 0;
  DroppedEvent event{};
  if (!ProcessRuntime().queue.TimeoutSlot(slot, event_id, &dropped, &abandoned, &name_id, &event)) {
    return info.Env().Null();
  }
  ProcessNativeTimers().RunsCancelled(dropped);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("event", DroppedEventToJs(info.Env(), event));
  o.Set("dropped", DroppedToJs(info.Env(), dropped));
  o.Set("abandoned", AbandonedToJs(info.Env(), abandoned));
  o.Set("nameId", static_cast<double>(name_id));
  return o;
}

// Ends the process at once, without joining threads: Node's own exit joins every worker thread,
// and one stuck in native code never returns. Only for a server that has stopped cleanly.
Napi::Value ExitNow(const Napi::CallbackInfo& info) {
  int code = static_cast<int>(IntegerArg(info, 0, "code", 0, 255));
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace

void WorkerSlotsBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<SlotRegister>(env, exports, "slotRegister");
  Export<SlotAttachTask>(env, exports, "slotAttachTask");
  Export<SlotReleaseThread>(env, exports, "slotReleaseThread");
  Export<SlotRetireThread>(env, exports, "slotRetireThread");
  Export<SlotsRunning>(env, exports, "slotsRunning");
  Export<ThreadHasSlot>(env, exports, "threadHasSlot");
  Export<TimeoutSlot>(env, exports, "timeoutSlot");
  Export<ExitNow>(env, exports, "exitNow");
}

}  // namespace gsf::binding
