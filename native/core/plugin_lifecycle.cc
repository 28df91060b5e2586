#include "plugin_lifecycle.h"

#include "plugin_hooks.h"

#include <cmath>

#include "plugin_api.h"
#include "plugin_services.h"
#include "plugin_results.h"
#include "plugin_sessions.h"
#include "runtime.h"

namespace gsf {

using hooks::RunHook;

namespace {

using namespace services;

// Releases user data outside any lock; a destructor that throws is stopped here, with a line.
void Release(const std::vector<std::pair<gsf_on_drop, void*>>& drops) {
  for (const auto& [drop, data] : drops) {
    std::string why;
    try {
      drop(data);
      continue;
    } catch (const std::exception& e) {
      why = std::string(": ") + e.what();
    } catch (...) {
    }
    try {
      Host().fallback().Log(2, "native plugin destructor (gsf_on_drop) threw; the exception was stopped" + why);
    } catch (...) {
    }
  }
}

// The payload of a timer_start timer's event: msgpack [id, plugin name].
std::string TimerPayload(uint64_t id, std::string_view plugin) {
  std::string out;
  out.push_back(static_cast<char>(0x92));
  const bool small = id <= 0xffffffffu;  // a uint32 reads as a JavaScript number, a uint64 as a bigint
  out.push_back(static_cast<char>(small ? 0xce : 0xcf));
  for (int shift = small ? 24 : 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((id >> shift) & 0xff));
  if (plugin.size() < 32) {
    out.push_back(static_cast<char>(0xa0 | plugin.size()));
  } else {
    out.push_back(static_cast<char>(0xd9));
    out.push_back(static_cast<char>(plugin.size()));  // names are checked shorter than 256 bytes
  }
  out.append(plugin);
  return out;
}

}  // namespace

void ApplyHeldPush(const HeldPush& push) {
  EventInput in;
  in.id = push.id;
  in.tag = push.tag;
  in.name_id = push.name_id;
  in.handler_id = push.handler_id;
  in.session_id = push.session_id;
  in.kind = GSF_EVENT_USER;
  in.payload = push.payload.empty() ? nullptr : reinterpret_cast<const uint8_t*>(push.payload.data());
  in.payload_len = push.payload.size();
  Host().runtime().queue.Push(in);
}

void ApplyHeldTimer(const HeldTimerStart& timer) {
  Host().runtime().timers.Add(timer.delay_ms, timer.interval_ms, timer.name_id, timer.handler_id,
                              timer.payload.empty() ? nullptr : reinterpret_cast<const uint8_t*>(timer.payload.data()),
                              timer.payload.size(), timer.id);
}

void DropHeldTimer(uint64_t id) {
  Host().runtime().timers.Release(id);
  ProcessNativeTimers().Cancel(id);  // a timer_start timer: ended, its user data released
}

NativeTimers& ProcessNativeTimers() {
  static NativeTimers* timers = new NativeTimers();  // never destroyed, as the runtime
  return *timers;
}

uint64_t NativeTimers::Start(const NativePlugin* plugin, double delay_ms, double interval_ms, std::string_view name,
                             gsf_on_timer fn, void* user_data, gsf_on_drop drop) {
  Runtime& rt = Host().runtime();
  std::string label = name.empty() ? "timer." + plugin->name : std::string(name);
  uint32_t name_id = rt.names.InternEventName(label), handler_id = rt.names.Intern(kNativeTimerEvent);
  // The record goes in under the lock before the store may fire it: a run waits for it.
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t key = next_key_++;
  std::string payload = TimerPayload(key, plugin->name);
  uint64_t id = rt.timers.Add(delay_ms, interval_ms, name_id, handler_id, reinterpret_cast<const uint8_t*>(payload.data()),
                              payload.size());
  timers_[key] = Timer{plugin, fn, user_data, drop, interval_ms > 0, id};
  by_id_[id] = key;
  return id;
}

uint64_t NativeTimers::StartHeld(const NativePlugin* plugin, double delay_ms, double interval_ms, std::string_view name,
                                 gsf_on_timer fn, void* user_data, gsf_on_drop drop, HeldTimerStart* held, std::string* payload) {
  Runtime& rt = Host().runtime();
  std::string label = name.empty() ? "timer." + plugin->name : std::string(name);
  uint32_t name_id = rt.names.InternEventName(label), handler_id = rt.names.Intern(kNativeTimerEvent);
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t key = next_key_++;
  *payload = TimerPayload(key, plugin->name);
  uint64_t id = rt.timers.Reserve();
  timers_[key] = Timer{plugin, fn, user_data, drop, interval_ms > 0, id};
  by_id_[id] = key;
  *held = HeldTimerStart{id, delay_ms, interval_ms, name_id, handler_id, *payload};
  return id;
}

void NativeTimers::EndLocked(uint64_t key, Timer& t, std::vector<std::pair<gsf_on_drop, void*>>* drops) {
  if (!t.ended) {
    t.ended = true;
    Host().runtime().timers.Cancel(t.timer_id);
  }
  if (t.running > 0) return;  // released when the run in progress returns
  if (t.drop) drops->emplace_back(t.drop, t.user_data);
  by_id_.erase(t.timer_id);
  timers_.erase(key);
}

void NativeTimers::RunsCancelled(const std::vector<DroppedEvent>& dropped) {
  uint32_t handler = Host().runtime().names.Find(kNativeTimerEvent);
  if (handler == 0) return;
  std::vector<std::pair<gsf_on_drop, void*>> drops;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const DroppedEvent& d : dropped) {
      if (d.handler_id != handler) continue;
      // The payload TimerPayload wrote: [key (uint32 or uint64), plugin name].
      const auto* p = reinterpret_cast<const uint8_t*>(d.payload.data());
      size_t n = d.payload.size(), width = n > 1 && p[1] == 0xce ? 4 : n > 1 && p[1] == 0xcf ? 8 : 0;
      if (n < 2 + width || p[0] != 0x92 || width == 0) continue;
      uint64_t key = 0;
      for (size_t i = 0; i < width; i++) key = (key << 8) | p[2 + i];
      auto it = timers_.find(key);
      if (it != timers_.end() && !it->second.repeating) EndLocked(key, it->second, &drops);
    }
  }
  Release(drops);
}

CallResult NativeTimers::Run(uint64_t key, const EventContext& event, PluginEffects* effects) {
  Timer t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = timers_.find(key);
    if (it == timers_.end() || it->second.ended) return CallResult();  // cancelled, or ended with its copy
    it->second.running++;
    if (!it->second.repeating) {
      it->second.ended = true;  // a one-shot fires once: a cancel from now on finds nothing
      by_id_.erase(it->second.timer_id);
    }
    t = it->second;
  }
  CallScope scope(t.plugin, effects, &event, false);
  std::string name = Host().runtime().names.NameOf(event.name_id);
  gsf_type_event_info info;
  info.struct_size = sizeof info;
  info.kind = event.kind;
  info.event_id = event.event_id;
  info.tag = event.tag;
  info.session_id = event.session_id;
  info.name = gsf_type_borrowed_str{name.data(), name.size()};
  gsf_type_status status = RunHook(scope, [&] { return t.fn(scope.call(), &info, t.user_data); });
  CallResult result;
  result.children = scope.state().children;
  if (scope.state().Revoked()) {
    result.status = GSF_STATUS_EXPIRED;
    result.error = "the event timed out while its handler ran; its effects were dropped";
    result.expired = true;
  } else {
    result.status = status;
    if (status != GSF_STATUS_OK) result.error = scope.state().error;
  }
  std::vector<std::pair<gsf_on_drop, void*>> drops;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = timers_.find(key);
    if (it != timers_.end() && --it->second.running == 0 && it->second.ended) EndLocked(key, it->second, &drops);
  }
  Release(drops);
  return result;
}

bool NativeTimers::Cancel(uint64_t id) {
  std::vector<std::pair<gsf_on_drop, void*>> drops;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto at = by_id_.find(id);
    if (at == by_id_.end()) return false;
    uint64_t key = at->second;
    EndLocked(key, timers_.at(key), &drops);
  }
  Release(drops);
  return true;
}

size_t NativeTimers::End(const NativePlugin* plugin) {
  std::vector<std::pair<gsf_on_drop, void*>> drops;
  size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<uint64_t> keys;
    for (auto& [key, t] : timers_) {
      if (plugin == nullptr || t.plugin == plugin) keys.push_back(key);
    }
    for (uint64_t key : keys) {
      Timer& t = timers_.at(key);
      if (!t.ended || t.running == 0) ++n;
      EndLocked(key, t, &drops);
    }
  }
  Release(drops);
  return n;
}

size_t NativeTimers::Count() {
  std::lock_guard<std::mutex> lock(mu_);
  return timers_.size();
}

namespace {

// A call of no event for a lifecycle hook or a timeout handler.
EventContext NoEvent() { return EventContext(); }

HookResult Outcome(CallScope& scope, gsf_type_status status) {
  HookResult r;
  r.ran = true;
  r.status = status;
  if (status != GSF_STATUS_OK) r.error = scope.state().error;
  return r;
}

}  // namespace

HookResult RunStartHook(const NativePlugin* plugin, PluginEffects* effects) {
  if (!plugin->on_start) return HookResult();
  EventContext none = NoEvent();
  CallScope scope(plugin, effects, &none, false);
  const gsf_type_host_api* host = Host().Api();
  return Outcome(scope, RunHook(scope, [&] { return plugin->on_start(host, scope.call()); }));
}

HookResult RunStopHook(const NativePlugin* plugin, int64_t deadline_ms, PluginEffects* effects) {
  if (!plugin->on_stop) return HookResult();
  EventContext none = NoEvent();
  CallScope scope(plugin, effects, &none, false);
  // Past its deadline gsf has gone on: what the hook does then fails with GSF_STATUS_EXPIRED.
  scope.state().expires_at_ms = deadline_ms;
  const gsf_type_host_api* host = Host().Api();
  return Outcome(scope, RunHook(scope, [&] { return plugin->on_stop(host, scope.call(), deadline_ms); }));
}

void RunTimeoutHandlers(const NativePlugin* plugin, std::string_view name, uint64_t event_id, uint64_t tag,
                        uint64_t session_id, PluginEffects* effects) {
  if (plugin->retired.load()) return;
  for (const NativeTimeoutHandler& h : plugin->timeout_handlers) {
    EventContext none = NoEvent();
    CallScope scope(plugin, effects, &none, false);
    gsf_type_event_info info;
    info.struct_size = sizeof info;
    info.kind = GSF_EVENT_USER;
    info.event_id = event_id;
    info.tag = tag;
    info.session_id = session_id;
    info.name = gsf_type_borrowed_str{name.data(), name.size()};
    RunHook(scope, [&] {
      h.fn(scope.call(), &info, h.user_data);
      return GSF_STATUS_OK;
    });
  }
}

size_t EndCopyHoldings(const NativePlugin* plugin) {
  return ProcessNativeTimers().End(plugin) + ProcessApiHost().DropContinuationsOf(plugin) +
         ProcessSessionHost().DropContinuationsOf(plugin) + ProcessResultHost().DropContinuationsOf(plugin) +
         ProcessResultHost().EndTransactionsOf(plugin) + ProcessResultHost().ReleaseCallables(plugin);
}

void ReleaseHandlerData(NativePlugin* plugin) {
  std::vector<std::pair<gsf_on_drop, void*>> drops;
  for (const NativeTimeoutHandler& h : plugin->timeout_handlers) {
    if (h.drop) drops.emplace_back(h.drop, h.user_data);
  }
  plugin->timeout_handlers.clear();
  Release(drops);
  ProcessSessionHost().ReleaseHooks(plugin);
}

bool RetireCopy(const NativePlugin* plugin, PluginEffects* effects) {
  if (plugin->retired.exchange(true)) return false;
  EndCopyHoldings(plugin);
  // Handlers are registered during init only and read on the main thread, where this runs.
  ReleaseHandlerData(const_cast<NativePlugin*>(plugin));
  if (plugin->on_unload) {
    EventContext none = NoEvent();
    CallScope scope(plugin, effects, &none, false);
    const gsf_type_host_api* host = Host().Api();
    const gsf_type_status status = RunHook(scope, [&] {
      plugin->on_unload(host, scope.call());
      return GSF_STATUS_OK;
    });
    if (status != GSF_STATUS_OK) {
      const std::string line = plugin->name + ": on_unload failed: " + scope.state().error;
      if (effects != nullptr) effects->Log(2, line);
      else Host().fallback().Log(2, line);
    }
  }
  return true;
}

namespace {

gsf_type_status TimerStart(gsf_type_call call, double delay_ms, double interval_ms, gsf_type_borrowed_str name, gsf_on_timer fn,
                           void* user_data, gsf_on_drop drop, uint64_t* timer_id) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = LiveCall(call, &status);
    if (!s) return status;  // the plugin that owns the timer is the call's
    if (!std::isfinite(delay_ms) || delay_ms < 0 || !std::isfinite(interval_ms) || interval_ms < 0) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "timer_start: times must be finite, non-negative ms");
    }
    if (!fn) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "timer_start: no timer function");
    if (name.ptr == nullptr && name.len != 0) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "timer_start: name is NULL but its length is not 0");
    std::string_view n = View(name);
    if (!n.empty() && (!ValidName(n) || n.size() > 255)) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "timer_start: the name must be UTF-8 of at most 255 bytes");
    }
    if (s->plugin->retired.load()) return Note(s, GSF_STATUS_UNAVAILABLE, "timer_start: this copy of the plugin was retired by a reload");
    uint64_t id;
    if (!s->init && s->event.event_id != 0 && s->effects != nullptr) {
      // In an event: held with its other effects (started once its changes are durable, or ended).
      HeldTimerStart held;
      std::string payload;
      id = ProcessNativeTimers().StartHeld(s->plugin, delay_ms, interval_ms, n, fn, user_data, drop, &held, &payload);
      s->effects->Timer(held);
    } else {
      id = ProcessNativeTimers().Start(s->plugin, delay_ms, interval_ms, n, fn, user_data, drop);
    }
    if (timer_id) *timer_id = id;
    return GSF_STATUS_OK;
  });
}

gsf_type_status RegisterTimeoutHandler(gsf_type_call init, gsf_on_event_timeout fn, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    CallState& s = ThisThreadCall();
    if (init.token == 0 || s.token.load(std::memory_order_relaxed) != init.token || !s.init) {
      return GSF_STATUS_UNAVAILABLE;  // only during init
    }
    if (!fn) return Note(&s, GSF_STATUS_INVALID_ARGUMENT, "register_timeout_handler: no handler function");
    return Host().RegisterTimeoutHandler(s, fn, user_data, drop);
  });
}

}  // namespace

void FillLifecycleServices(gsf_type_host_api* api) {
  api->timer_start = TimerStart;
  api->register_timeout_handler = RegisterTimeoutHandler;
}

}  // namespace gsf
