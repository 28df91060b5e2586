#include "plugin_host.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <chrono>
#include <ctime>

#include "plugin_api.h"
#include "plugin_hooks.h"
#include "plugin_results.h"
#include "plugin_sessions.h"
#include "runtime.h"
#include "session_frame.h"

namespace gsf {

using hooks::Finish;

namespace {

// The event's name for gsf_type_event_info, looked up once per name and thread.
std::string_view EventName(Runtime& rt, uint32_t name_id) {
  thread_local uint32_t last_id = 0;
  thread_local std::string last_name;
  if (name_id != last_id) {
    last_name = rt.names.NameOf(name_id);
    last_id = name_id;
  }
  return last_name;
}

}  // namespace

void StderrEffects::Log(int level, std::string_view line) {
  // glog's shape, as the JavaScript logger writes it: level letter, UTC time, thread.
  char head[64];
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char letter = level >= 2 ? 'E' : level == 1 ? 'W' : 'I';
  int n = std::snprintf(head, sizeof head, "%c%04d%02d%02d %02d:%02d:%02d.%03d native] ", letter, tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  std::string text(head, static_cast<size_t>(n));
  text.append(line);
  text.push_back('\n');
  ssize_t ignored = ::write(2, text.data(), text.size());  // one write: lines of threads never interleave
  (void)ignored;
}

PluginHost::PluginHost(Runtime* runtime) : runtime_(runtime) { FillHostApi(&api_); }

PluginHost& ProcessPluginHost() {
  static PluginHost* host = new PluginHost(&ProcessRuntime());  // never destroyed, as the runtime
  return *host;
}

const NativeHandler* PluginHost::Handler(uint32_t index) const {
  return index < kMaxHandlers ? handlers_[index].load(std::memory_order_acquire) : nullptr;
}

void PluginHost::DeclareEvent(std::string_view name) {
  uint32_t id = runtime_->names.Intern(name);
  std::unique_lock<std::shared_mutex> lock(known_mu_);
  known_events_.insert(id);
}

bool PluginHost::KnowsEvent(uint32_t name_id) const {
  std::shared_lock<std::shared_mutex> lock(known_mu_);
  return known_events_.count(name_id) > 0;
}

const NativeHandler* PluginHost::OwnerLocked(bool message, std::string_view name) const {
  const auto& table = message ? messages_ : events_;
  auto it = table.find(std::string(name));
  return it == table.end() ? nullptr : handlers_[it->second].load(std::memory_order_relaxed);
}

gsf_type_status PluginHost::Register(CallState& init, bool message, std::string_view name, gsf_on_event fn,
                                     void* user_data) {
  // Only init registers, and init runs under load_mu_ (the loading thread holds it).
  auto* plugin = const_cast<NativePlugin*>(init.plugin);
  const char* what = message ? "message type" : "event";
  const NativeHandler* owner = OwnerLocked(message, name);
  // A reload's copy takes over what the older copies of its plugin registered.
  if (owner && plugin->replacing && owner->plugin->name == plugin->name) owner = nullptr;
  const NativePlugin* owner_plugin = owner ? owner->plugin : nullptr;
  for (const NativeHandler& h : plugin->pending) {
    if (h.message == message && h.name == name) owner_plugin = plugin;
  }
  if (owner_plugin) {
    std::string line = "plugin '" + plugin->name + "' registers " + what + " '" + std::string(name) +
                       "', already registered by plugin '" + owner_plugin->name + "'";
    if (plugin->conflict.empty()) plugin->conflict = line;
    init.error = line;
    return GSF_STATUS_CONFLICT;
  }
  plugin->pending.push_back(NativeHandler{plugin, message, std::string(name), 0, fn, user_data});
  return GSF_STATUS_OK;
}

gsf_type_status PluginHost::RegisterTimeoutHandler(CallState& init, gsf_on_event_timeout fn, void* user_data, gsf_on_drop drop) {
  // Only init registers, and init runs under load_mu_ (the loading thread holds it).
  auto* plugin = const_cast<NativePlugin*>(init.plugin);
  plugin->timeout_handlers.push_back(NativeTimeoutHandler{fn, user_data, drop});
  return GSF_STATUS_OK;
}

bool PluginHost::Revoke(uint64_t event_id) {
  bool running = RevokeEventCall(event_id);
  DropContinuations(event_id);
  ProcessResultHost().RevokeTransactionOf(event_id);
  return running;
}

void PluginHost::DropContinuations(uint64_t event_id) {
  // The event will never run its pending continuations: their user data is released now.
  ProcessApiHost().DropEventContinuations(event_id);
  ProcessSessionHost().DropEventContinuations(event_id);
  ProcessResultHost().DropEventContinuations(event_id);
}

const NativePlugin* PluginHost::Find(std::string_view path_view) {
  std::string path(path_view);
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved)) path = resolved;
  std::lock_guard<std::mutex> lock(load_mu_);
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : it->second;
}

std::vector<const NativePlugin*> PluginHost::Copies() {
  std::lock_guard<std::mutex> lock(load_mu_);
  std::vector<const NativePlugin*> out;
  for (const auto& [path, plugin] : by_path_) out.push_back(plugin);
  return out;
}

namespace {

gsf_type_status Run(const NativeHandler& h, CallScope& scope, const gsf_type_event_info& info, std::string_view bytes) {
  try {
    return h.fn(scope.call(), &info, gsf_bytes(bytes.data(), bytes.size()), h.user_data);
  } catch (const std::exception& e) {
    // A C++ plugin without the wrapper: the exception reached gsf's frame; stop it here.
    scope.state().error = std::string("an exception crossed the plugin boundary: ") + e.what();
  } catch (...) {
    scope.state().error = "an exception crossed the plugin boundary";
  }
  return GSF_STATUS_INTERNAL;
}

gsf_type_event_info Info(const EventContext& event, std::string_view name) {
  gsf_type_event_info info;
  info.struct_size = sizeof info;
  info.kind = event.kind;
  info.event_id = event.event_id;
  info.tag = event.tag;
  info.session_id = event.session_id;
  info.name = gsf_type_borrowed_str{name.data(), name.size()};
  return info;
}

}  // namespace

CallResult PluginHost::CallEvent(uint32_t index, const EventContext& event, std::string_view payload,
                                 PluginEffects* effects) {
  const NativeHandler* h = Handler(index);
  if (!h || h->message) {
    CallResult r;
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.error = "no native event handler " + std::to_string(index);
    return r;
  }
  CallScope scope(h->plugin, effects, &event, false);
  std::string_view name = EventName(*runtime_, event.name_id);
  gsf_type_event_info info = Info(event, name);
  gsf_type_status status = Run(*h, scope, info, payload);
  return Finish(scope.state(), status);
}

CallResult PluginHost::CallMessage(uint32_t index, const EventContext& event, std::string_view frame,
                                   PluginEffects* effects) {
  CallResult r;
  const NativeHandler* h = Handler(index);
  if (!h || !h->message) {
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.error = "no native message handler " + std::to_string(index);
    return r;
  }
  thread_local std::string storage;
  Envelope envelope;
  if (!DecodeEnvelope(frame, IsMsgpackSession(event.session_id), &envelope, &storage, &r.error)) {
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.decode_failed = true;
    return r;
  }
  if (envelope.type != h->name) {
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.error = "message type '" + std::string(envelope.type) + "' reached the handler of '" + h->name + "'";
    return r;
  }
  CallScope scope(h->plugin, effects, &event, false);
  CallState& state = scope.state();
  state.message = true;
  state.message_type = h->name;
  state.has_message_id = envelope.has_id;
  state.message_id = envelope.id;
  state.name = h->name;  // a message event is named after its type
  state.name_known = true;
  gsf_type_event_info info = Info(event, h->name);
  gsf_type_status status = Run(*h, scope, info, envelope.body);
  r = Finish(state, status);
  r.has_message_id = envelope.has_id;
  r.message_id = envelope.id;
  return r;
}

}  // namespace gsf
