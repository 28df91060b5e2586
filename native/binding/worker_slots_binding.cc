#include "../core/runtime.h"
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
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().queue.SlotReleaseThread(thread_id)));
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
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

Napi::Value TimeoutSlot(const Napi::CallbackInfo& info) {
  int slot = SlotArg(info, 0);
  uint64_t event_id = UintArg(info, 1, "eventId");
  std::vector<DroppedEvent> dropped;
  if (!ProcessRuntime().queue.TimeoutSlot(slot, event_id, &dropped)) return info.Env().Null();
  return DroppedToJs(info.Env(), dropped);
}

}  // namespace

void WorkerSlotsBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<SlotRegister>(env, exports, "slotRegister");
  Export<SlotAttachTask>(env, exports, "slotAttachTask");
  Export<SlotReleaseThread>(env, exports, "slotReleaseThread");
  Export<SlotsRunning>(env, exports, "slotsRunning");
  Export<TimeoutSlot>(env, exports, "timeoutSlot");
}

}  // namespace gsf::binding
