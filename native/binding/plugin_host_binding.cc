// Native plugins from JavaScript: load, call a handler, revoke a timed-out call. A call's
// effects (frames, log lines) come back as one flat array for src/plugins/native-loader.ts.
#include <chrono>
#include <vector>

#include "../core/plugin_host.h"
#include "../core/runtime.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

/** Effect codes in the returned array (EffectKind in src/native.ts). */
enum EffectCode { kSend = 1, kPublish = 2, kLog = 3 };

struct Effect {
  EffectCode code;
  uint64_t session;
  int level;
  bool binary;
  std::string a, b;
};

// Collects one call's effects on this thread; the list is reused from call to call.
struct CollectingEffects : PluginEffects {
  std::vector<Effect> list;
  size_t used = 0;

  Effect& Next(EffectCode code) {
    if (used == list.size()) list.emplace_back();
    Effect& e = list[used++];
    e.code = code;
    return e;
  }
  void Send(uint64_t session, std::string_view frame, bool binary) override {
    Effect& e = Next(kSend);
    e.session = session;
    e.binary = binary;
    e.a.assign(frame);
  }
  void Publish(std::string_view group, std::string_view json, std::string_view msgpack) override {
    Effect& e = Next(kPublish);
    e.a.assign(group);
    e.b.assign(json);
    e.binary = false;
    e.session = 0;
    // The msgpack frame follows the JSON one in `b`, after its length is known from `level`.
    e.level = static_cast<int>(json.size());
    e.b.append(msgpack);
  }
  void Log(int level, std::string_view line) override {
    Effect& e = Next(kLog);
    e.level = level;
    e.a.assign(line);
  }
};

CollectingEffects& Collector() {
  thread_local CollectingEffects effects;
  effects.used = 0;
  return effects;
}

Napi::Value Bytes(Napi::Env env, std::string_view bytes) {
  return Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

Napi::Array EffectsToJs(Napi::Env env, const CollectingEffects& fx) {
  Napi::Array out = Napi::Array::New(env);
  uint32_t i = 0;
  for (size_t k = 0; k < fx.used; ++k) {
    const Effect& e = fx.list[k];
    out.Set(i++, Napi::Number::New(env, e.code));
    switch (e.code) {
      case kSend:
        out.Set(i++, Napi::Number::New(env, static_cast<double>(e.session)));
        out.Set(i++, e.binary ? Bytes(env, e.a) : Napi::String::New(env, e.a.data(), e.a.size()));
        break;
      case kPublish: {
        std::string_view b(e.b);
        out.Set(i++, Napi::String::New(env, e.a));
        out.Set(i++, Napi::String::New(env, e.b.data(), static_cast<size_t>(e.level)));
        out.Set(i++, Bytes(env, b.substr(static_cast<size_t>(e.level))));
        break;
      }
      case kLog:
        out.Set(i++, Napi::Number::New(env, e.level));
        out.Set(i++, Napi::String::New(env, e.a));
        break;
    }
  }
  return out;
}

/**
 * The call context cells of this thread (kContextCells doubles): JavaScript writes the event's
 * fields there before a call instead of passing them as arguments, which keeps the hot calls at
 * two arguments (node-addon-api allocates for more than six). Never freed: a worker's view may
 * outlive its thread's exit by a little, and a few bytes per thread ever made do not matter.
 */
constexpr size_t kContextCells = 8;
enum ContextCell { kEventId = 0, kTag, kKind, kSessionId, kNameId, kFrameStart, kFrameEnd };

double* ContextCells() {
  thread_local double* cells = new double[kContextCells]();
  return cells;
}

EventContext EventFromCells(const double* c) {
  EventContext ev;
  ev.event_id = static_cast<uint64_t>(c[kEventId]);
  ev.tag = static_cast<uint64_t>(c[kTag]);
  ev.kind = static_cast<uint8_t>(c[kKind]);
  ev.session_id = static_cast<uint64_t>(c[kSessionId]);
  ev.name_id = static_cast<uint32_t>(c[kNameId]);
  return ev;
}

/**
 * What a call gives back: null when it succeeded with nothing to apply; the frame itself when
 * it succeeded with exactly one frame for its own session (a reply, the common case); else
 * {status, error, effects, decodeFailed, messageId?}.
 */
Napi::Value ResultToJs(Napi::Env env, const CallResult& r, CollectingEffects& fx, uint64_t session) {
  if (r.expired) fx.used = 0;  // a timed-out call's effects are dropped
  if (r.status == GSF_STATUS_OK) {
    if (fx.used == 0) return env.Null();
    const Effect& e = fx.list[0];
    if (fx.used == 1 && e.code == kSend && e.session == session) {
      return e.binary ? Bytes(env, e.a) : Napi::String::New(env, e.a.data(), e.a.size());
    }
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("status", Napi::Number::New(env, r.status));
  out.Set("error", Napi::String::New(env, r.error));
  out.Set("effects", EffectsToJs(env, fx));
  out.Set("decodeFailed", Napi::Boolean::New(env, r.decode_failed));
  if (r.has_message_id) out.Set("messageId", Napi::Number::New(env, r.message_id));
  return out;
}

Napi::Value PluginLoad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Utf8Arg path(info, 0, "path");
  std::string replaces;
  if (info.Length() > 1 && !info[1].IsUndefined()) {
    if (!info[1].IsString()) ThrowCoded(info.Env(), ErrorKind::kTypeError, kErrArgument, "replaces must be a plugin name");
    replaces = info[1].As<Napi::String>().Utf8Value();
  }
  CollectingEffects& fx = Collector();
  const NativePlugin* plugin;
  try {
    plugin = &ProcessPluginHost().Load(path.view(), &fx, replaces);
  } catch (const PluginLoadError& e) {
    Napi::Error err = Napi::Error::New(env, e.what());
    err.Set("code", Napi::String::New(env, "GSF_ERR_PLUGIN_LOAD"));
    err.Set("reason", Napi::String::New(env, e.reason()));
    err.Set("effects", EffectsToJs(env, fx));
    throw err;
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("name", Napi::String::New(env, plugin->name));
  out.Set("version", Napi::String::New(env, plugin->version));
  out.Set("path", Napi::String::New(env, plugin->path));
  Napi::Array events = Napi::Array::New(env);
  Napi::Array messages = Napi::Array::New(env);
  for (uint32_t index : plugin->handlers) {
    const NativeHandler* h = ProcessPluginHost().Handler(index);
    Napi::Object entry = Napi::Object::New(env);
    entry.Set(h->message ? "type" : "name", Napi::String::New(env, h->name));
    entry.Set("handler", Napi::Number::New(env, index));
    if (h->message) messages.Set(messages.Length(), entry);
    else events.Set(events.Length(), entry);
  }
  out.Set("events", events);
  out.Set("messages", messages);
  out.Set("effects", EffectsToJs(env, fx));
  return out;
}

Napi::Value PluginDeclareEvents(const Napi::CallbackInfo& info) {
  if (!info[0].IsArray()) ThrowCoded(info.Env(), ErrorKind::kTypeError, kErrArgument, "names must be an array of strings");
  Napi::Array names = info[0].As<Napi::Array>();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    Napi::Value name = names.Get(i);
    if (!name.IsString()) ThrowCoded(info.Env(), ErrorKind::kTypeError, kErrArgument, "names must be an array of strings");
    ProcessPluginHost().DeclareEvent(name.As<Napi::String>().Utf8Value());
  }
  return info.Env().Undefined();
}

Napi::Value PluginContextView(const Napi::CallbackInfo& info) {
  return Napi::ArrayBuffer::New(info.Env(), static_cast<void*>(ContextCells()), kContextCells * sizeof(double));
}

Napi::Value PluginCallEvent(const Napi::CallbackInfo& info) {
  uint32_t handler = IdArg(info, 0, "handler");
  ByteView payload = BytesArg(info, 1, "payload", true);
  EventContext ev = EventFromCells(ContextCells());
  CollectingEffects& fx = Collector();
  CallResult r = ProcessPluginHost().CallEvent(
      handler, ev, std::string_view(reinterpret_cast<const char*>(payload.data), payload.length), &fx);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginCallMessage(const Napi::CallbackInfo& info) {
  uint32_t handler = IdArg(info, 0, "handler");
  ByteView bytes = BytesArg(info, 1, "bytes", false);
  const double* cells = ContextCells();
  double start = cells[kFrameStart], end = cells[kFrameEnd];
  if (!(start >= 0 && start <= end && end <= static_cast<double>(bytes.length))) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "the frame's start and end lie outside bytes");
  }
  EventContext ev = EventFromCells(cells);
  std::string_view frame(reinterpret_cast<const char*>(bytes.data) + static_cast<size_t>(start),
                         static_cast<size_t>(end - start));
  CollectingEffects& fx = Collector();
  CallResult r = ProcessPluginHost().CallMessage(handler, ev, frame, &fx);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginRevokeEvent(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), ProcessPluginHost().Revoke(UintArg(info, 0, "eventId")));
}

// Runs a handler `count` times in a C++ loop: the cost of one call across the plugin
// boundary without the JavaScript one. Returns ns per call.
Napi::Value PluginBenchCalls(const Napi::CallbackInfo& info) {
  uint32_t handler = IdArg(info, 0, "handler");
  double count = IntegerArg(info, 1, "count", 1, 1e9);
  ByteView payload = BytesArg(info, 2, "payload", true);
  std::string_view bytes(reinterpret_cast<const char*>(payload.data), payload.length);
  EventContext ev;
  ev.tag = 1ull << 40;
  ev.name_id = ProcessRuntime().names.Intern("bench.native_calls");
  CollectingEffects& fx = Collector();
  auto start = std::chrono::steady_clock::now();
  for (double i = 0; i < count; ++i) {
    ev.event_id = static_cast<uint64_t>(i) + 1;
    fx.used = 0;
    CallResult r = ProcessPluginHost().CallEvent(handler, ev, bytes, &fx);
    if (r.status != GSF_STATUS_OK) ThrowCoded(info.Env(), ErrorKind::kError, kErrState, "handler failed: " + r.error);
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  return Napi::Number::New(info.Env(), ns / count);
}

}  // namespace

void PluginHostBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<PluginLoad>(env, exports, "pluginLoad");
  Export<PluginDeclareEvents>(env, exports, "pluginDeclareEvents");
  Export<PluginContextView>(env, exports, "pluginContextView");
  Export<PluginCallEvent>(env, exports, "pluginCallEvent");
  Export<PluginCallMessage>(env, exports, "pluginCallMessage");
  Export<PluginRevokeEvent>(env, exports, "pluginRevokeEvent");
  Export<PluginBenchCalls>(env, exports, "pluginBenchCalls");
}

}  // namespace gsf::binding
