#include "../core/plugin_effects.h"
#include "../core/runtime.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

Napi::Value TimerAdd(const Napi::CallbackInfo& info) {
  double delay_ms = NumberArg(info, 0, "delayMs");
  double interval_ms = NumberArg(info, 1, "intervalMs");
  uint32_t name_id = IdArg(info, 2, "nameId");
  uint32_t handler_id = IdArg(info, 3, "handlerId");
  ByteView payload = BytesArg(info, 4, "payload", true);
  // Optional: the id a held timer reserved (0 or absent: a new id).
  double reserved = info.Length() > 5 && !info[5].IsUndefined() ? NumberArg(info, 5, "reservedId") : 0;
  if (reserved < 0 || reserved > kMaxSafeInteger) reserved = 0;
  uint64_t id = ProcessRuntime().timers.Add(delay_ms, interval_ms, name_id, handler_id, payload.data, payload.length,
                                            static_cast<uint64_t>(reserved));
  return Napi::Number::New(info.Env(), static_cast<double>(id));
}

Napi::Value TimerReserve(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().timers.Reserve()));
}

Napi::Value TimerRelease(const Napi::CallbackInfo& info) {
  double id = NumberArg(info, 0, "id");
  // A native timer_start timer's reservation also ends its record (its user data is released).
  if (id >= 1 && id <= kMaxSafeInteger) DropHeldTimer(static_cast<uint64_t>(id));
  return info.Env().Undefined();
}

Napi::Value TimerCancel(const Napi::CallbackInfo& info) {
  double id = NumberArg(info, 0, "id");
  bool ok = id >= 1 && id <= kMaxSafeInteger && ProcessRuntime().timers.Cancel(static_cast<uint64_t>(id));
  return Napi::Boolean::New(info.Env(), ok);
}

Napi::Value TimerFire(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().timers.Fire()));
}

// timersStop(): a server stop began; timers added from now on are not started (timerAdd returns 0).
Napi::Value TimersStop(const Napi::CallbackInfo& info) {
  ProcessRuntime().timers.Stop();
  return info.Env().Undefined();
}

Napi::Value TimersRefusedAtStop(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().timers.RefusedAtStop()));
}

Napi::Value TimerSkipped(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().timers.SkippedTotal()));
}

}  // namespace

void TimerStoreBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<TimerAdd>(env, exports, "timerAdd");
  Export<TimerCancel>(env, exports, "timerCancel");
  Export<TimerReserve>(env, exports, "timerReserve");
  Export<TimerRelease>(env, exports, "timerRelease");
  Export<TimerFire>(env, exports, "timerFire");
  Export<TimerSkipped>(env, exports, "timerSkipped");
  Export<TimersStop>(env, exports, "timersStop");
  Export<TimersRefusedAtStop>(env, exports, "timersRefusedAtStop");
}

}  // namespace gsf::binding
