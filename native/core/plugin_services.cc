// The host-services table (gsf_type_host_api) over the process runtime. Every callback is a
// C function: nothing may unwind out of it, so each body runs inside Guard.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "../include/gsf_msgpack.h"
#include "event_tags.h"
#include "json_msgpack.h"
#include "plugin_host.h"
#include "runtime.h"
#include "session_frame.h"

namespace gsf {

namespace {

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

// Records why a service failed on the live call (a later set_error of the plugin replaces it).
gsf_type_status Note(CallState* s, gsf_type_status status, const std::string& message) {
  if (s) s->error = message;
  return status;
}

template <typename F>
gsf_type_status Guard(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return GSF_STATUS_RESOURCE_EXHAUSTED;
  } catch (...) {
    return GSF_STATUS_INTERNAL;
  }
}

// The flags snapshot as msgpack, re-read when the main thread publishes a new one.
struct FlagCache {
  uint64_t version = UINT64_MAX;
  std::string msgpack;
  bool inherit = true, random = true;
  double verbose = 0;
};

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
  }
  return cache;
}

// The plugin of this thread's call, live or not (log lines name it even after a timeout).
const NativePlugin* CallPlugin(gsf_type_call call) {
  CallState& s = ThisThreadCall();
  return call.token != 0 && s.token.load(std::memory_order_relaxed) == call.token ? s.plugin : nullptr;
}

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

// The live call a service acts for; token 0 is allowed where `outside_ok` (plugin threads).
bool Caller(gsf_type_call call, bool outside_ok, CallState** s, gsf_type_status* why) {
  *s = LiveCall(call, why);
  return *s != nullptr || (outside_ok && call.token == 0);
}

// The handler id of an event native code may target, or 0 (with the failure noted).
uint32_t TargetEvent(CallState* s, const char* what, std::string_view event, gsf_type_status* status) {
  uint32_t id = ValidName(event) ? Host().runtime().names.Find(event) : 0;
  if (id == 0 || !Host().KnowsEvent(id)) {
    *status = Note(s, GSF_STATUS_NOT_FOUND, std::string(what) + ": no plugin registers an event named '" + std::string(event) + "'");
    return 0;
  }
  return id;
}

bool CheckPayload(CallState* s, const char* what, std::string_view payload, gsf_type_status* status) {
  std::string error;
  if (payload.empty() || MsgpackValid(payload, &error)) return true;
  *status = Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": payload is not one msgpack value (" + error + ")");
  return false;
}

gsf_type_status Invoke(gsf_type_call call, gsf_type_borrowed_str event, gsf_type_borrowed_bytes payload,
                       const gsf_type_invoke_options* options, uint64_t* event_id) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, true, &s, &status)) return status;
    gsf_type_invoke_options o = gsf_invoke_options();
    if (options) {
      if (options->struct_size < 8) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: options.struct_size is too small");
      // A plugin built for an older minor passes a shorter struct: read what it has.
      std::memcpy(&o, options, std::min<size_t>(options->struct_size, sizeof o));
    }
    std::string_view name = View(event);
    uint32_t handler = TargetEvent(s, "invoke", name, &status);
    if (handler == 0) return status;
    if (!CheckPayload(s, "invoke", View(payload), &status)) return status;
    bool in_event = s && !s->init;
    uint64_t tag;
    switch (o.tag_mode) {
      case GSF_TAG_MODE_VALUE:
        if (!IsValidTag(o.tag)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: tag must be below 2^53");
        tag = o.tag;
        break;
      case GSF_TAG_MODE_NAMED:
        tag = NamedTag(View(o.tag_name));
        break;
      case GSF_TAG_MODE_RANDOM:
        tag = RandomTag();
        break;
      case GSF_TAG_MODE_DEFAULT: {
        // SPEC 6.2.4, as resolveTag in src/events/tags.ts.
        const FlagCache& f = Flags();
        if (!f.inherit) tag = f.random ? RandomTag() : 0;
        else if (!in_event || s->event.kind == GSF_EVENT_TIMER || s->event.kind == GSF_EVENT_API) tag = RandomTag();
        else tag = s->event.tag;
        break;
      }
      default:
        return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: unknown tag mode " + std::to_string(o.tag_mode));
    }
    Runtime& rt = Host().runtime();
    std::string child;
    std::string_view event_name = View(o.name);
    if (event_name.empty() && in_event) {
      // "{parent}_#{n}": the n-th event this one created.
      if (!s->name_known) {
        s->name = rt.names.NameOf(s->event.name_id);
        s->name_known = true;
      }
      child = s->name + "_#" + std::to_string(++s->children);
      event_name = child;
    } else if (event_name.empty()) {
      event_name = name;
    } else if (!ValidName(event_name)) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: options.name is not valid UTF-8");
    }
    EventInput in;
    in.tag = tag;
    in.name_id = rt.names.Intern(event_name);
    in.handler_id = handler;
    in.session_id = in_event ? s->event.session_id : 0;
    in.kind = GSF_EVENT_USER;
    in.payload = payload.ptr;
    in.payload_len = payload.ptr ? payload.len : 0;
    uint64_t id = rt.queue.Push(in);
    if (event_id) *event_id = id;
    return GSF_STATUS_OK;
  });
}

// The frame of one message for a session of the given codec, in a per-thread buffer.
gsf_type_status Frame(CallState* s, const char* what, bool msgpack, std::string_view type, std::string_view body,
                      const double* id, std::string** frame) {
  thread_local std::string buffers[2];
  std::string& out = buffers[msgpack ? 1 : 0];
  out.clear();
  std::string error;
  if (!EncodeFrame(msgpack, type, body, id, &out, &error)) {
    return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + error);
  }
  *frame = &out;
  return GSF_STATUS_OK;
}

gsf_type_status Reply(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_bytes body) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, false, &s, &status)) return status;
    if (!s->message || !s->effects) return Note(s, GSF_STATUS_UNAVAILABLE, "reply: this call handles no client message");
    std::string_view t = type.len ? View(type) : s->message_type;
    double id = s->message_id;
    std::string* frame;
    bool msgpack = IsMsgpackSession(s->event.session_id);
    status = Frame(s, "reply", msgpack, t, View(body), s->has_message_id ? &id : nullptr, &frame);
    if (status == GSF_STATUS_OK) s->effects->Send(s->event.session_id, *frame, msgpack);
    return status;
  });
}

gsf_type_status Send(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str type, gsf_type_borrowed_bytes body) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, false, &s, &status)) return status;
    if (!s->effects) return Note(s, GSF_STATUS_UNAVAILABLE, "send: no running event");
    if (session_id == 0 || !IsValidTag(session_id)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "send: no such session id");
    std::string* frame;
    bool msgpack = IsMsgpackSession(session_id);
    status = Frame(s, "send", msgpack, View(type), View(body), nullptr, &frame);
    if (status == GSF_STATUS_OK) s->effects->Send(session_id, *frame, msgpack);
    return status;
  });
}

gsf_type_status Publish(gsf_type_call call, gsf_type_borrowed_str group, gsf_type_borrowed_str type,
                        gsf_type_borrowed_bytes body) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, false, &s, &status)) return status;
    if (!s->effects) return Note(s, GSF_STATUS_UNAVAILABLE, "publish: no running event");
    if (!ValidName(View(group))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "publish: group must be non-empty UTF-8");
    std::string *json, *msgpack;
    status = Frame(s, "publish", false, View(type), View(body), nullptr, &json);
    if (status == GSF_STATUS_OK) status = Frame(s, "publish", true, View(type), View(body), nullptr, &msgpack);
    if (status == GSF_STATUS_OK) s->effects->Publish(View(group), *json, *msgpack);
    return status;
  });
}

bool CounterNames(gsf_type_borrowed_str category, gsf_type_borrowed_str name) {
  return ValidName(View(category)) && ValidName(View(name));
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
    double v;
    if (!Host().runtime().counters.Value(View(category), View(name), &v)) return GSF_STATUS_NOT_FOUND;
    if (value) *value = v;
    return GSF_STATUS_OK;
  });
}

uint64_t TagNamed(gsf_type_borrowed_str name) { return NamedTag(View(name)); }
uint64_t TagRandom() { return RandomTag(); }

gsf_type_status FlagGet(gsf_type_borrowed_str name, gsf_type_host_bytes* value) {
  return Guard([&]() -> gsf_type_status {
    std::string key(View(name));
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

gsf_type_status AddTimer(gsf_type_call call, const char* what, double delay_ms, double interval_ms,
                         gsf_type_borrowed_str event, gsf_type_borrowed_bytes payload, uint64_t* timer_id) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, true, &s, &status)) return status;
    if (!std::isfinite(delay_ms) || delay_ms < 0 || !std::isfinite(interval_ms) || interval_ms < 0) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": times must be finite, non-negative ms");
    }
    uint32_t handler = TargetEvent(s, what, View(event), &status);
    if (handler == 0) return status;
    if (!CheckPayload(s, what, View(payload), &status)) return status;
    uint64_t id = Host().runtime().timers.Add(delay_ms, interval_ms, handler, handler, payload.ptr,
                                              payload.ptr ? payload.len : 0);
    if (timer_id) *timer_id = id;
    return GSF_STATUS_OK;
  });
}

gsf_type_status TimerAfter(gsf_type_call call, double delay_ms, gsf_type_borrowed_str event,
                           gsf_type_borrowed_bytes payload, uint64_t* timer_id) {
  return AddTimer(call, "timer_after", delay_ms, 0, event, payload, timer_id);
}

gsf_type_status TimerEvery(gsf_type_call call, double interval_ms, gsf_type_borrowed_str event,
                           gsf_type_borrowed_bytes payload, uint64_t* timer_id) {
  if (!(interval_ms > 0)) {
    gsf_type_status why;
    return Note(LiveCall(call, &why), GSF_STATUS_INVALID_ARGUMENT, "timer_every: the interval must be > 0 ms");
  }
  return AddTimer(call, "timer_every", interval_ms, interval_ms, event, payload, timer_id);
}

gsf_type_status TimerCancel(uint64_t timer_id) {
  return Guard([&]() -> gsf_type_status { return Host().runtime().timers.Cancel(timer_id) ? GSF_STATUS_OK : GSF_STATUS_NOT_FOUND; });
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
  api->invoke = Invoke;
  api->reply = Reply;
  api->send = Send;
  api->publish = Publish;
  api->counter_define = CounterDefine;
  api->counter_update = CounterUpdate;
  api->counter_increase = CounterIncrease;
  api->counter_read = CounterRead;
  api->tag_named = TagNamed;
  api->tag_random = TagRandom;
  api->flag_get = FlagGet;
  api->timer_after = TimerAfter;
  api->timer_every = TimerEvery;
  api->timer_cancel = TimerCancel;
}

}  // namespace gsf
