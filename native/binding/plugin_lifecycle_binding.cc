// Native plugins' lifecycle from JavaScript (ABI 1.2): on_start, on_stop on a thread of its own
// (so that gsf goes on past its deadline), timeout handlers, timer_start timers, and ending what
// gsf holds for a copy at reload and at shutdown (src/plugins/native-lifecycle.ts).
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "../core/plugin_lifecycle.h"
#include "bindings.h"
#include "boundary.h"
#include "in_call_answers.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

const NativePlugin* CopyArg(const Napi::CallbackInfo& info, size_t i) {
  Utf8Arg path(info, i, "path");
  const NativePlugin* plugin = ProcessPluginHost().Find(path.view());
  if (!plugin) ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "no native plugin is loaded from " + std::string(path.view()));
  return plugin;
}

Napi::Value HookToJs(Napi::Env env, const HookResult& r, const CollectingEffects& fx) {
  if (!r.ran) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  out.Set("status", r.status);
  out.Set("error", r.error);
  out.Set("effects", EffectsToJs(env, fx));
  return out;
}

// pluginStart(path): null when the copy has no on_start, else {status, error, effects}.
Napi::Value PluginStart(const Napi::CallbackInfo& info) {
  const NativePlugin* plugin = CopyArg(info, 0);
  CollectingEffects& fx = Collector();
  HookResult r = RunStartHook(plugin, &fx);
  return HookToJs(info.Env(), r, fx);
}

// The log lines of an on_stop running on its own thread: kept for pluginStopTake, or, once gsf
// has stopped waiting for the hook (pluginStopAbandon), written to the server's log at once.
struct LineEffects : PluginEffects {
  std::mutex mu;
  std::vector<std::pair<int, std::string>> lines;
  bool abandoned = false;
  void Send(uint64_t, std::string_view, bool) override {}
  void Publish(std::string_view, std::string_view, std::string_view) override {}
  void Log(int level, std::string_view line) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!abandoned) {
        lines.emplace_back(level, std::string(line));
        return;
      }
    }
    ProcessPluginHost().fallback().Log(level, line);
  }
};

struct StopJob {
  std::atomic<bool> done{false};
  HookResult result;
  LineEffects fx;
};

std::mutex jobs_mu;
std::unordered_map<uint32_t, std::shared_ptr<StopJob>>& Jobs() {
  static auto* jobs = new std::unordered_map<uint32_t, std::shared_ptr<StopJob>>();  // leaked: a hook may outlive exit
  return *jobs;
}
uint32_t next_job = 1;

// pluginStopBegin(path, deadlineMs): 0 when the copy has no on_stop, else a job for pluginStopTake.
Napi::Value PluginStopBegin(const Napi::CallbackInfo& info) {
  const NativePlugin* plugin = CopyArg(info, 0);
  double deadline = NumberArg(info, 1, "deadlineMs");
  if (!plugin->on_stop) return Napi::Number::New(info.Env(), 0);
  auto job = std::make_shared<StopJob>();
  uint32_t id;
  {
    std::lock_guard<std::mutex> lock(jobs_mu);
    id = next_job++;
    Jobs()[id] = job;
  }
  // Detached: past its deadline gsf goes on, and a hook that never returns keeps only its thread.
  std::thread([job, plugin, deadline] {
    job->result = RunStopHook(plugin, static_cast<int64_t>(deadline), &job->fx);
    job->done.store(true, std::memory_order_release);
  }).detach();
  return Napi::Number::New(info.Env(), id);
}

std::shared_ptr<StopJob> TakeJob(const Napi::CallbackInfo& info, bool only_done) {
  uint32_t id = IdArg(info, 0, "job");
  std::lock_guard<std::mutex> lock(jobs_mu);
  auto it = Jobs().find(id);
  if (it == Jobs().end()) ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "no on_stop job " + std::to_string(id));
  if (only_done && !it->second->done.load(std::memory_order_acquire)) return nullptr;
  std::shared_ptr<StopJob> job = it->second;
  Jobs().erase(it);
  return job;
}

Napi::Array LinesToJs(Napi::Env env, const std::vector<std::pair<int, std::string>>& lines) {
  Napi::Array out = Napi::Array::New(env, lines.size() * 2);
  for (uint32_t i = 0; i < lines.size(); ++i) {
    out.Set(2 * i, lines[i].first);
    out.Set(2 * i + 1, lines[i].second);
  }
  return out;
}

// pluginStopTake(job): null while the hook runs, else {status, error, lines: [level, text]*}.
Napi::Value PluginStopTake(const Napi::CallbackInfo& info) {
  std::shared_ptr<StopJob> job = TakeJob(info, true);
  if (!job) return info.Env().Null();
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("status", job->result.status);
  out.Set("error", job->result.error);
  out.Set("lines", LinesToJs(env, job->fx.lines));
  return out;
}

// pluginStopAbandon(job): gsf stops waiting for a hook past its deadline: the lines it logged so
// far ([level, text]*); later ones go to the server's log as it writes them (its host calls
// fail with GSF_STATUS_EXPIRED from the deadline on, see RunStopHook).
Napi::Value PluginStopAbandon(const Napi::CallbackInfo& info) {
  std::shared_ptr<StopJob> job = TakeJob(info, false);
  std::vector<std::pair<int, std::string>> lines;
  {
    std::lock_guard<std::mutex> lock(job->fx.mu);
    job->fx.abandoned = true;
    lines.swap(job->fx.lines);
  }
  return LinesToJs(info.Env(), lines);
}

// pluginTimeout(path, name, eventId, tag, sessionId): the effects of the copy's timeout handlers.
Napi::Value PluginTimeout(const Napi::CallbackInfo& info) {
  const NativePlugin* plugin = CopyArg(info, 0);
  Utf8Arg name(info, 1, "name");
  uint64_t id = UintArg(info, 2, "eventId"), tag = UintArg(info, 3, "tag"), session = UintArg(info, 4, "sessionId");
  CollectingEffects& fx = Collector();
  RunTimeoutHandlers(plugin, name.view(), id, tag, session, &fx);
  return EffectsToJs(info.Env(), fx);
}

// pluginCallTimer(key): runs a timer_start timer for the event in the context cells.
Napi::Value PluginCallTimer(const Napi::CallbackInfo& info) {
  uint64_t key = UintArg(info, 0, "key");
  EventContext ev = EventFromCells(ContextCells());
  CollectingEffects& fx = Collector();
  CallResult r = ProcessNativeTimers().Run(key, ev, &fx);
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

// pluginRetire(path): a reload retires the copy; the effects of its on_unload, or null when it was retired already.
Napi::Value PluginRetire(const Napi::CallbackInfo& info) {
  const NativePlugin* plugin = CopyArg(info, 0);
  CollectingEffects& fx = Collector();
  if (!RetireCopy(plugin, &fx)) return info.Env().Null();
  return EffectsToJs(info.Env(), fx);
}

// pluginEndHoldings(path | null): ends the timers and continuations of a copy, or of every copy
// (shutdown); the number of pieces of user data released.
Napi::Value PluginEndHoldings(const Napi::CallbackInfo& info) {
  const NativePlugin* plugin = info[0].IsNull() || info[0].IsUndefined() ? nullptr : CopyArg(info, 0);
  return Napi::Number::New(info.Env(), static_cast<double>(EndCopyHoldings(plugin)));
}

}  // namespace

void PluginLifecycleBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<PluginStart>(env, exports, "pluginStart");
  Export<PluginStopBegin>(env, exports, "pluginStopBegin");
  Export<PluginStopAbandon>(env, exports, "pluginStopAbandon");
  Export<PluginStopTake>(env, exports, "pluginStopTake");
  Export<PluginTimeout>(env, exports, "pluginTimeout");
  Export<PluginCallTimer>(env, exports, "pluginCallTimer");
  Export<PluginRetire>(env, exports, "pluginRetire");
  Export<PluginEndHoldings>(env, exports, "pluginEndHoldings");
}

}  // namespace gsf::binding
