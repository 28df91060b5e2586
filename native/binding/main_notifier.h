// A callback on the main thread that any thread can ring: a thread-safe function of the
// environment that set it, never keeping the process alive, released when that environment is
// torn down (so a thread ringing during exit rings nothing).
#pragma once

#include <napi.h>

#include <mutex>
#include <set>

namespace gsf::binding {

class MainNotifier {
 public:
  explicit MainNotifier(const char* name) : name_(name) {}

  /** Sets the callback to `info[0]` (a function), or clears it (null or undefined); a TypeError otherwise. */
  void Set(const Napi::CallbackInfo& info);
  /** Calls the callback on its thread without blocking; nothing happens while none is set. */
  void Notify();

 private:
  struct Hook {
    MainNotifier* notifier;
    napi_env env;
  };
  static void Cleanup(void* arg);
  void ReleaseLocked();

  const char* name_;
  std::mutex mu_;
  Napi::ThreadSafeFunction tsfn_;
  napi_env env_ = nullptr;
  bool live_ = false;
  // Environments with our cleanup hook; Node aborts on a duplicate registration.
  std::set<napi_env> hooked_;
};

}  // namespace gsf::binding
