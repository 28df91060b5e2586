// Native plugins from JavaScript: load, call a handler, revoke a timed-out call. A call's
// effects (frames, log lines, answers, object requests) come back as one flat array for
// src/plugins/native-loader.ts (plugin_effects_binding.h).
#include <vector>

#include "../core/plugin_host.h"
#include "../core/plugin_services.h"
#include "../core/runtime.h"
#include "bindings.h"
#include "in_call_answers.h"
#include "boundary.h"
#include "outbound_ring_writer.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

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
  out.Set("api", ApiRegistrationsToJs(env, plugin));
  Napi::Object hooks = Napi::Object::New(env);  // ABI 1.2: what the lifecycle glue must call
  hooks.Set("start", plugin->on_start != nullptr);
  hooks.Set("stop", plugin->on_stop != nullptr);
  hooks.Set("unload", plugin->on_unload != nullptr);
  hooks.Set("timeout", !plugin->timeout_handlers.empty());
  out.Set("hooks", hooks);
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
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginCallMessage(const Napi::CallbackInfo& info) {
  uint32_t handler = IdArg(info, 0, "handler");
  ByteView bytes = BytesArg(info, 1, "bytes", false);
  double* cells = ContextCells();
  double start = cells[kFrameStart], end = cells[kFrameEnd];
  if (!(start >= 0 && start <= end && end <= static_cast<double>(bytes.length))) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "the frame's start and end lie outside bytes");
  }
  EventContext ev = EventFromCells(cells);
  std::string_view frame(reinterpret_cast<const char*>(bytes.data) + static_cast<size_t>(start),
                         static_cast<size_t>(end - start));
  // The worker's outbound ring, when given: frames of a call that only sent frames are written
  // there (from the position in kRingWrite) and the call returns the ring's new write position.
  ByteView ring = info.Length() > 2 ? BytesArg(info, 2, "ring", true) : ByteView{};
  double ring_write = cells[kRingWrite];
  if (ring.data != nullptr && !(ring_write >= 0 && ring_write <= 4294967295.0)) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, "the ring's write position must be a uint32");
  }
  CollectingEffects& fx = Collector();
  CallResult r = ProcessPluginHost().CallMessage(handler, ev, frame, &fx);
  AnswerInCall(r, fx, ev);
  if (ring.data != nullptr && r.status == GSF_STATUS_OK && !r.expired && fx.used > 0) {
    NoteCall(r);
    double end = WriteSendsToRing(ring.data, ring.length, static_cast<uint32_t>(ring_write), fx);
    if (end >= 0) return Napi::Number::New(info.Env(), end);
  }
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginRevokeEvent(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), ProcessPluginHost().Revoke(UintArg(info, 0, "eventId")));
}

// logTarget(fd, json, minloglevel, alsoStderr): where native lines outside a call go (the
// server log's descriptor and format), the level they start from and whether stderr gets a copy.
Napi::Value LogTarget(const Napi::CallbackInfo& info) {
  SetLogTarget(static_cast<int>(IntegerArg(info, 0, "fd", 0, 1 << 30)), info[1].ToBoolean().Value(),
               static_cast<int>(IntegerArg(info, 2, "minloglevel", 0, 3)), info[3].ToBoolean().Value());
  return info.Env().Undefined();
}

// pluginOutsideCalls(open): whether plugin threads' invokes and timers (gsf_no_call()) are taken.
Napi::Value PluginOutsideCalls(const Napi::CallbackInfo& info) {
  services::SetOutsideCallsOpen(info[0].ToBoolean().Value());
  return info.Env().Undefined();
}

Napi::Value PluginDropContinuations(const Napi::CallbackInfo& info) {
  ProcessPluginHost().DropContinuations(UintArg(info, 0, "eventId"));
  return info.Env().Undefined();
}

}  // namespace

void PluginHostBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<PluginLoad>(env, exports, "pluginLoad");
  Export<LogTarget>(env, exports, "logTarget");
  Export<PluginOutsideCalls>(env, exports, "pluginOutsideCalls");
  Export<PluginDeclareEvents>(env, exports, "pluginDeclareEvents");
  Export<PluginContextView>(env, exports, "pluginContextView");
  Export<PluginCallEvent>(env, exports, "pluginCallEvent");
  Export<PluginCallMessage>(env, exports, "pluginCallMessage");
  Export<PluginRevokeEvent>(env, exports, "pluginRevokeEvent");
  Export<PluginDropContinuations>(env, exports, "pluginDropContinuations");
}

}  // namespace gsf::binding
