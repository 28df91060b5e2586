// The wake-up callback: a thread-safe function owned by the environment that
// set it (the main thread), callable from any thread, never keeping the
// process alive.
#include <cstdint>
#include <mutex>
#include <set>

#include "../core/runtime.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

void CallWake(Napi::Env env, Napi::Function fn, uint64_t* generation, void* data);

using WakeFunction = Napi::TypedThreadSafeFunction<uint64_t, void, CallWake>;

struct WakeOwner {
  std::mutex mu;
  WakeFunction tsfn;
  napi_env env = nullptr;
  bool live = false;
  // Identifies the current function, so a late finalizer of a replaced one is ignored.
  uint64_t generation = 0;
  // Environments with our cleanup hook; Node aborts on a duplicate registration.
  std::set<napi_env> hooked;
};

// Leaked on purpose, like the runtime: other threads may call the sink during exit.
WakeOwner& Owner() {
  static WakeOwner* owner = new WakeOwner();
  return *owner;
}

void ReleaseLocked(WakeOwner& o) {
  if (!o.live) return;
  o.live = false;
  o.env = nullptr;
  o.tsfn.Release();
}

// Runs on the owning thread. A throwing callback is reported like any uncaught
// JS exception instead of being swallowed by the legacy N-API policy.
void CallWake(Napi::Env env, Napi::Function fn, uint64_t*, void*) {
  if (env == nullptr || fn.IsEmpty()) return;  // torn down with a call still queued
  try {
    fn.Call({});
  } catch (const Napi::Error& e) {
    napi_fatal_exception(env, e.Value());
  }
}

void CallSink() {
  WakeOwner& o = Owner();
  std::lock_guard<std::mutex> lock(o.mu);
  // Non-blocking: the queue is unbounded, so a producer thread never waits on the main thread.
  if (o.live) o.tsfn.NonBlockingCall();
}

// Runs when the environment is torn down (worker exit, process exit).
void EnvCleanup(void* arg) {
  napi_env env = static_cast<napi_env>(arg);
  WakeOwner& o = Owner();
  std::lock_guard<std::mutex> lock(o.mu);
  o.hooked.erase(env);
  if (o.env == env) ReleaseLocked(o);
}

void Finalize(Napi::Env, void*, uint64_t* generation) {
  WakeOwner& o = Owner();
  {
    std::lock_guard<std::mutex> lock(o.mu);
    if (o.live && o.generation == *generation) {
      // Node finalized the function under us (its environment is going away).
      o.live = false;
      o.env = nullptr;
    }
  }
  delete generation;
}

Napi::Value SetWakeCallback(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static std::once_flag sink_once;
  std::call_once(sink_once, [] { ProcessRuntime().wake.SetSink(CallSink); });

  Napi::Value arg = info[0];
  WakeOwner& o = Owner();
  if (arg.IsNull() || arg.IsUndefined()) {
    std::lock_guard<std::mutex> lock(o.mu);
    ReleaseLocked(o);
    return env.Undefined();
  }
  if (!arg.IsFunction()) {
    ThrowCoded(env, ErrorKind::kTypeError, kErrArgument, "fn must be a function or null");
  }
  std::lock_guard<std::mutex> lock(o.mu);
  ReleaseLocked(o);
  uint64_t* generation = new uint64_t(++o.generation);
  WakeFunction tsfn = WakeFunction::New(env, arg.As<Napi::Function>(), "gsf-wake", 0, 1, generation, Finalize,
                                       static_cast<void*>(nullptr));
  tsfn.Unref(env);
  o.tsfn = tsfn;
  o.env = env;
  o.live = true;
  if (o.hooked.insert(env).second) {
    napi_add_env_cleanup_hook(env, EnvCleanup, env);
  }
  return env.Undefined();
}

Napi::Value ArmWake(const Napi::CallbackInfo& info) {
  Runtime& rt = ProcessRuntime();
  rt.wake.Arm([&rt] { return rt.timers.EarlierAdded(); });
  return info.Env().Undefined();
}

}  // namespace

void WakeSignalBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<SetWakeCallback>(env, exports, "setWakeCallback");
  Export<ArmWake>(env, exports, "armWake");
}

}  // namespace gsf::binding
