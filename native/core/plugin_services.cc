// The host-services table (gsf_type_host_api) over the process runtime: memory, errors, logs,
// registration, counters, tags and flags here; events, sessions and timers in
// plugin_event_services.cc. Every callback is a C function: nothing may unwind out of it, so
// each body runs inside Guard.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "../include/gsf_msgpack.h"
#include "event_tags.h"
#include "json_msgpack.h"
#include "name_table.h"
#include "plugin_api.h"
#include "plugin_host.h"
#include "plugin_lifecycle.h"
#include "plugin_services.h"
#include "plugin_results.h"
#include "plugin_sessions.h"
#include "runtime.h"

namespace gsf {
namespace services {

PluginHost& Host() { return ProcessPluginHost(); }

std::string_view View(gsf_type_borrowed_str s) { return s.ptr ? std::string_view(s.ptr, s.len) : std::string_view(); }
std::string_view View(gsf_type_borrowed_bytes b) {
  return b.ptr ? std::string_view(reinterpret_cast<const char*>(b.ptr), b.len) : std::string_view();
}

bool ValidName(std::string_view s) {
  if (s.empty()) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    int n = Utf8SequenceLength(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

bool Text(gsf_type_borrowed_str s) { return s.ptr != nullptr && ValidName(View(s)); }

bool TagName(gsf_type_borrowed_str s) { return s.len == 0 || Text(s); }

bool CounterNames(gsf_type_borrowed_str category, gsf_type_borrowed_str name) {
  // '.' and '..' are no URL path segment (clients fold them away): REST could not read the counter.
  const auto segment = [](gsf_type_borrowed_str s) { return Text(s) && View(s) != "." && View(s) != ".."; };
  return segment(category) && segment(name);
}

std::string Named(const CallState* s, const char* what) {
  return std::string(what) + " of plugin '" + (s != nullptr && s->plugin != nullptr ? s->plugin->name : std::string("?")) + "'";
}

// Records why a service failed on the live call (a later set_error of the plugin replaces it).
namespace {
std::atomic<bool> outside_calls_open{true};
}  // namespace

void SetOutsideCallsOpen(bool open) { outside_calls_open.store(open, std::memory_order_release); }
bool OutsideCallsOpen() { return outside_calls_open.load(std::memory_order_acquire); }

gsf_type_status Note(CallState* s, gsf_type_status status, const std::string& message) {
  if (s) s->error = message;
  return status;
}

bool FlagValue(const FlagCache& c, const char* name, gsf_mp_reader* value) {
  gsf_mp_reader map;
  gsf_mp_reader_init(&map, c.msgpack.data(), c.msgpack.size());
  return gsf_mp_map_find(&map, name, value);
}

const FlagCache& Flags() {
  thread_local FlagCache cache;
  ConfigBlob& config = Host().runtime().config;
  uint64_t version = config.Version();
  if (version != cache.version) {
    cache.version = version;
    cache.msgpack.clear();
    if (!JsonToMsgpack(config.Get(), &cache.msgpack, nullptr)) cache.msgpack = "\x80";
    gsf_mp_reader v;
    int b = 1;
    cache.inherit = !(FlagValue(cache, "enable_inheriting_event_tag", &v) && gsf_mp_read_bool(&v, &b) && !b);
    cache.random = !(FlagValue(cache, "enable_random_event_tag", &v) && gsf_mp_read_bool(&v, &b) && !b);
    cache.verbose = 0;
    if (FlagValue(cache, "v", &v)) gsf_mp_read_double(&v, &cache.verbose);
    cache.minloglevel = 0;
    cache.has_minloglevel = FlagValue(cache, "minloglevel", &v) && gsf_mp_read_double(&v, &cache.minloglevel);
    b = 0;
    cache.also_stderr = FlagValue(cache, "alsologtostderr", &v) && gsf_mp_read_bool(&v, &b) && b;
  }
  return cache;
}

// The plugin of this thread's call, live or not (log lines name it even after a timeout).
const NativePlugin* CallPlugin(gsf_type_call call) {
  CallState& s = ThisThreadCall();
  return call.token != 0 && s.token.load(std::memory_order_relaxed) == call.token ? s.plugin : nullptr;
}

}  // namespace services

namespace {

using namespace services;

void* MemAlloc(size_t size) { return std::malloc(size ? size : 1); }
void* MemRealloc(void* ptr, size_t size) { return std::realloc(ptr, size ? size : 1); }
void MemFree(void* ptr) { std::free(ptr); }

void SetError(gsf_type_call call, gsf_type_borrowed_str message) {
  try {
    if (CallPlugin(call)) ThisThreadCall().error.assign(View(message));
  } catch (...) {
  }
}

void Log(gsf_type_call call, int32_t level, gsf_type_borrowed_str text) {
  try {
    const NativePlugin* plugin = CallPlugin(call);
    std::string line = plugin ? plugin->name : std::string("native");
    line += ": ";
    line.append(View(text));
    gsf_type_status why;
    CallState* s = LiveCall(call, &why);
    if (s && s->effects) {
      s->effects->Log(level, line);
    } else if (level >= 0 || Flags().verbose >= -static_cast<double>(level)) {
      Host().fallback().Log(level, line);
    }
  } catch (...) {
  }
}

gsf_type_status RegisterHandler(gsf_type_call init, bool message, gsf_type_borrowed_str name, gsf_on_event fn,
                                void* user_data) {
  return Guard([&]() -> gsf_type_status {
    CallState& s = ThisThreadCall();
    if (init.token == 0 || s.token.load(std::memory_order_relaxed) != init.token || !s.init) {
      return GSF_STATUS_UNAVAILABLE;  // only during init
    }
    std::string_view n = View(name);
    const char* what = message ? "register_message" : "register_event";
    if (!ValidName(n)) return Note(&s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": the name must be non-empty UTF-8");
    // The name becomes the name of every event it handles, which is at most kMaxEventNameBytes.
    if (n.size() > kMaxEventNameBytes) {
      return Note(&s, GSF_STATUS_INVALID_ARGUMENT,
                  std::string(what) + ": the name must be at most " + std::to_string(kMaxEventNameBytes) + " bytes (" +
                      std::to_string(n.size()) + " given)");
    }
    if (message && n[0] == '_') {
      return Note(&s, GSF_STATUS_INVALID_ARGUMENT, "register_message: types starting with '_' are reserved ('" + std::string(n) + "')");
    }
    if (!fn) return Note(&s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": no handler function");
    return Host().Register(s, message, n, fn, user_data);
  });
}

gsf_type_status RegisterEvent(gsf_type_call init, gsf_type_borrowed_str name, gsf_on_event fn, void* user_data) {
  return RegisterHandler(init, false, name, fn, user_data);
}

gsf_type_status RegisterMessage(gsf_type_call init, gsf_type_borrowed_str type, gsf_on_message fn, void* user_data) {
  return RegisterHandler(init, true, type, fn, user_data);
}


gsf_type_status CounterDefine(gsf_type_borrowed_str category, gsf_type_borrowed_str name,
                              gsf_type_borrowed_str description, double initial, int32_t is_double) {
  return Guard([&]() -> gsf_type_status {
    if (!CounterNames(category, name) || !std::isfinite(initial)) return GSF_STATUS_INVALID_ARGUMENT;
    CounterStore& counters = Host().runtime().counters;
    double current;
    if (counters.Value(View(category), View(name), &current)) return GSF_STATUS_OK;
    std::string text(View(description));
    counters.Update(View(category), View(name), initial, is_double != 0, &text);
    return GSF_STATUS_OK;
  });
}

gsf_type_status CounterUpdate(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double value, int32_t is_double) {
  return Guard([&]() -> gsf_type_status {
    if (!CounterNames(category, name) || !std::isfinite(value)) return GSF_STATUS_INVALID_ARGUMENT;
    Host().runtime().counters.Update(View(category), View(name), value, is_double != 0);
    return GSF_STATUS_OK;
  });
}

gsf_type_status CounterIncrease(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double amount, double* value) {
  return Guard([&]() -> gsf_type_status {
    if (!CounterNames(category, name) || !std::isfinite(amount)) return GSF_STATUS_INVALID_ARGUMENT;
    double v = Host().runtime().counters.Increase(View(category), View(name), amount);
    if (value) *value = v;
    return GSF_STATUS_OK;
  });
}

gsf_type_status CounterRead(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double* value) {
  return Guard([&]() -> gsf_type_status {
    // The names as every counter call checks them: a name no counter can have is a mistake, not NOT_FOUND.
    if (!value || !CounterNames(category, name)) return GSF_STATUS_INVALID_ARGUMENT;
    double v;
    if (!Host().runtime().counters.Value(View(category), View(name), &v)) return GSF_STATUS_NOT_FOUND;
    *value = v;
    return GSF_STATUS_OK;
  });
}

uint64_t TagNamed(gsf_type_borrowed_str name) { return NamedTag(View(name)); }
uint64_t TagRandom() { return RandomTag(); }

gsf_type_status FlagGet(gsf_type_borrowed_str name, gsf_type_host_bytes* value) {
  return Guard([&]() -> gsf_type_status {
    if (!value) return GSF_STATUS_INVALID_ARGUMENT;  // the value has nowhere to go
    value->ptr = nullptr;
    value->len = 0;
    std::string key(View(name));
    if (!ValidName(key) || key.find('\0') != std::string::npos) return GSF_STATUS_INVALID_ARGUMENT;
    gsf_mp_reader v;
    if (!FlagValue(Flags(), key.c_str(), &v)) return GSF_STATUS_NOT_FOUND;
    const uint8_t* start = v.p;
    if (!gsf_mp_skip(&v)) return GSF_STATUS_INTERNAL;
    size_t len = static_cast<size_t>(v.p - start);
    auto* copy = static_cast<uint8_t*>(MemAlloc(len));
    if (!copy) return GSF_STATUS_RESOURCE_EXHAUSTED;
    std::memcpy(copy, start, len);
    value->ptr = copy;
    value->len = len;
    return GSF_STATUS_OK;
  });
}

}  // namespace

void FillHostApi(gsf_type_host_api* api) {
  std::memset(api, 0, sizeof *api);
  api->struct_size = sizeof *api;
  api->abi_major = GSF_PLUGIN_ABI_MAJOR;
  api->abi_minor = GSF_PLUGIN_ABI_MINOR;
  api->mem_alloc = MemAlloc;
  api->mem_realloc = MemRealloc;
  api->mem_free = MemFree;
  api->set_error = SetError;
  api->log = Log;
  api->register_event = RegisterEvent;
  api->register_message = RegisterMessage;
  api->invoke = services::Invoke;
  api->reply = services::Reply;
  api->send = services::Send;
  api->publish = services::Publish;
  api->counter_define = CounterDefine;
  api->counter_update = CounterUpdate;
  api->counter_increase = CounterIncrease;
  api->counter_read = CounterRead;
  api->tag_named = TagNamed;
  api->tag_random = TagRandom;
  api->flag_get = FlagGet;
  api->timer_after = services::TimerAfter;
  api->timer_every = services::TimerEvery;
  api->timer_cancel = services::TimerCancel;
  FillApiServices(api);
  FillLifecycleServices(api);
  FillSessionServices(api);
  FillResultServices(api);
}

}  // namespace gsf
