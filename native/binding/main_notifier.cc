#include "main_notifier.h"

#include "boundary.h"

namespace gsf::binding {

void MainNotifier::ReleaseLocked() {
  if (!live_) return;
  live_ = false;
  env_ = nullptr;
  tsfn_.Release();
}

void MainNotifier::Cleanup(void* arg) {
  Hook* hook = static_cast<Hook*>(arg);
  MainNotifier& n = *hook->notifier;
  {
    std::lock_guard<std::mutex> lock(n.mu_);
    n.hooked_.erase(hook->env);
    if (n.env_ == hook->env) n.ReleaseLocked();
  }
  delete hook;
}

void MainNotifier::Set(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseLocked();
  if (info[0].IsNull() || info[0].IsUndefined()) return;
  if (!info[0].IsFunction()) ThrowCoded(env, ErrorKind::kTypeError, kErrArgument, "fn must be a function or null");
  tsfn_ = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), name_, 0, 1);
  tsfn_.Unref(env);
  env_ = env;
  live_ = true;
  if (hooked_.insert(env).second) napi_add_env_cleanup_hook(env, Cleanup, new Hook{this, env});
}

void MainNotifier::Notify() {
  std::lock_guard<std::mutex> lock(mu_);
  if (live_) tsfn_.NonBlockingCall();
}

}  // namespace gsf::binding
