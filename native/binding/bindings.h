// One wrapper per core concept; each exports its functions onto the module object.
#pragma once

#include <napi.h>

#include <vector>

#include "../core/tag_queue.h"

namespace gsf {
struct NativePlugin;
}  // namespace gsf

namespace gsf::binding {

/** Reads a worker-slot index argument. */
int SlotArg(const Napi::CallbackInfo& info, size_t i);
/** CancelledEvent[] of native.ts, shared by the timeouts and a worker's release. */
Napi::Array DroppedToJs(Napi::Env env, const std::vector<DroppedEvent>& dropped);
/** One event of them, as DroppedToJs writes it. */
Napi::Object DroppedEventToJs(Napi::Env env, const DroppedEvent& d);
/** The abandoned events of a released or timed-out worker, as DroppedToJs writes them. */
Napi::Array AbandonedToJs(Napi::Env env, const std::vector<AbandonedEvent>& abandoned);

class NameTableBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class TagQueueBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class WorkerSlotsBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class WakeSignalBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class TimerStoreBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class CounterStoreBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class ProfilerBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class ObjectCacheBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class ConfigBlobBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class PluginHostBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class PluginEventRunBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

class PluginApiBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

/** Native plugins' lifecycle hooks, timeout handlers and timer_start timers (ABI 1.2). */
class PluginLifecycleBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

/** Native plugins' declarations, result continuations, transactions and cache reads (ABI 1.2). */
class PluginResultsBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

/** Native plugins' session hooks and account continuations (ABI 1.2). */
class PluginSessionsBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

/** A native plugin's API and console registrations for `pluginLoad` (plugin_api_binding.cc); null when none. */
Napi::Value ApiRegistrationsToJs(Napi::Env env, const NativePlugin* plugin);

class FlushMailboxBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

/** Exports of the testing build only (testing_binding.cc, GSF_NATIVE_TESTING). */
class TestingBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

/** The enums src/native.ts copies, for its check at load. */
class EnumLayoutBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace gsf::binding
