#include "plugin_host.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <climits>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "json_msgpack.h"
#include "plugin_api.h"
#include "plugin_hooks.h"
#include "plugin_results.h"
#include "plugin_services.h"
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

namespace {

std::atomic<int> log_fd{2};
std::atomic<bool> log_json{false};
std::atomic<int> log_min{0};
std::atomic<bool> log_also_stderr{false};

// The bytes of a maximal subpart of a UTF-8 sequence at `p` that is not valid (at least 1): what
// TextDecoder replaces with one U+FFFD (WHATWG Encoding, "UTF-8 decode").
size_t InvalidUtf8Run(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    need = 1;
  } else if (c >= 0xe0 && c <= 0xef) {
    need = 2;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 3;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  }
  size_t n = 1;
  while (n <= need && p + n < end && p[n] >= lo && p[n] <= hi) {
    lo = 0x80;
    hi = 0xbf;
    ++n;
  }
  return n;
}

// Appends `text` with what could end or disguise a line escaped, as escapeLogText in
// src/log/logger.ts does: C0 controls, DEL, C1 controls and U+2028/U+2029 (UTF-8). In JSON mode
// quotes and backslashes too, so the text is a JSON string's content. Bytes that are not UTF-8
// become U+FFFD, as the lines of a call do when the JavaScript logger decodes them: the log stays
// UTF-8 whatever a plugin writes.
void AppendEscaped(std::string* out, std::string_view text, bool json) {
  const unsigned char* const begin = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* const end = begin + text.size();
  char u[8];
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    unsigned code = 0x110000;  // none
    size_t skip = 0;
    if (c < 0x20 || c == 0x7f) {
      code = c;
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      code = static_cast<unsigned char>(text[i + 1]);
      skip = 1;
    } else if (c == 0xe2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xa8 || static_cast<unsigned char>(text[i + 2]) == 0xa9)) {
      code = static_cast<unsigned char>(text[i + 2]) == 0xa8 ? 0x2028 : 0x2029;
      skip = 2;
    } else if (json && (c == '"' || c == '\\')) {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
      continue;
    }
    if (code == 0x110000) {
      if (c < 0x80) {
        out->push_back(static_cast<char>(c));
        continue;
      }
      const int len = Utf8SequenceLength(begin + i, end);
      if (len == 0) {
        out->append("\xef\xbf\xbd");
        i += InvalidUtf8Run(begin + i, end) - 1;
      } else {
        out->append(text.data() + i, static_cast<size_t>(len));
        i += static_cast<size_t>(len) - 1;
      }
      continue;
    }
    i += skip;
    if (code == '\n') out->append("\\n");
    else if (code == '\r') out->append("\\r");
    else if (code == '\t') out->append("\\t");
    else {
      std::snprintf(u, sizeof u, "\\u%04x", code);
      out->append(u);
    }
  }
}

// Writes `text` to `fd` whole: a partial write goes on with the rest, and a non-blocking pipe
// whose reader is behind is waited for (up to 5 s per line), as the JavaScript logger does
// (src/log/write-out.ts). 0, or the errno of the failure.
int WriteWhole(int fd, const std::string& text) {
  size_t off = 0;
  int waited_ms = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n >= 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && waited_ms < 5000) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 10);
      waited_ms += 10;
      continue;
    }
    return errno;
  }
  return 0;
}

// A native line that could not be written: said on standard error, at most once a minute.
void ReportLost(int fd, int err) {
  static std::atomic<int64_t> reported_at{INT64_MIN / 2};
  static std::atomic<int64_t> lost{0};
  lost.fetch_add(1, std::memory_order_relaxed);
  int64_t now = NowMs(), last = reported_at.load(std::memory_order_relaxed);
  if (fd == 2 || now - last < 60000 || !reported_at.compare_exchange_strong(last, now)) return;
  std::string note = "gsf: native log lines cannot be written to descriptor " + std::to_string(fd) + " (" +
                     std::strerror(err) + "): " + std::to_string(lost.exchange(0)) + " line(s) lost\n";
  ssize_t ignored = ::write(2, note.data(), note.size());
  (void)ignored;
}

}  // namespace

void SetLogTarget(int fd, bool json, int minloglevel, bool also_stderr) {
  log_json.store(json, std::memory_order_relaxed);
  log_also_stderr.store(also_stderr, std::memory_order_relaxed);
  log_min.store(minloglevel, std::memory_order_relaxed);
  log_fd.store(fd, std::memory_order_release);
}

void StderrEffects::Log(int level, std::string_view line) {
  const services::FlagCache& flags = services::Flags();
  const double min = flags.has_minloglevel ? flags.minloglevel : log_min.load(std::memory_order_relaxed);
  if (level >= 0 && level < min) return;
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  const bool json = log_json.load(std::memory_order_relaxed);
  char head[96];
  int n;
  if (json) {
    const char* name = level >= 2 ? "ERROR" : level == 1 ? "WARNING" : "INFO";
    n = std::snprintf(head, sizeof head, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\",\"level\":\"%s\",\"thread\":\"native\",\"msg\":\"",
                      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms, name);
  } else {
    // glog's shape, as the JavaScript logger writes it: level letter, UTC time, thread.
    char letter = level >= 2 ? 'E' : level == 1 ? 'W' : 'I';
    n = std::snprintf(head, sizeof head, "%c%04d%02d%02d %02d:%02d:%02d.%03d native] ", letter, tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  }
  std::string text(head, static_cast<size_t>(n));
  AppendEscaped(&text, line, json);
  text.append(json ? "\"}\n" : "\n");
  // One write: lines of threads never interleave (O_APPEND on a log file).
  const int fd = log_fd.load(std::memory_order_acquire);
  if (int err = WriteWhole(fd, text)) ReportLost(fd, err);
  const bool also_stderr = flags.has_minloglevel ? flags.also_stderr : log_also_stderr.load(std::memory_order_relaxed);
  if (also_stderr && fd != 2) {
    if (int err = WriteWhole(2, text)) ReportLost(2, err);
  }
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
