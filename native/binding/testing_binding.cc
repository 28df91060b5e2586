// Exports of the testing build only (gsf_native_testing.node, GSF_NATIVE_TESTING): the JSON <->
// msgpack transcoder, frame encoding and tags of native plugins, so that tests can check them
// against JSON.parse, msgpackr, encodeFrame and namedTag; counter removal; and a loop of plugin
// calls that measures the boundary alone (bench/native.ts). The production addon has none of them.
#include <chrono>

#include "../core/event_tags.h"
#include "../core/json_msgpack.h"
#include "../core/plugin_host.h"
#include "../core/plugin_results.h"
#include "../core/runtime.h"
#include "../core/session_frame.h"
#include "bindings.h"
#include "boundary.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

std::string_view View(const ByteView& b) { return {reinterpret_cast<const char*>(b.data), b.length}; }

// pluginHostAbiMinor(minor): from now on the plugin host checks descriptors, and tells plugins
// its minor, as a gsf of ABI 1.<minor> would (an older host); pluginHostAbiMinor() restores this
// build's minor. Returns the minor in force.
Napi::Value PluginHostAbiMinorJs(const Napi::CallbackInfo& info) {
  const uint16_t minor = info.Length() > 0 && !info[0].IsUndefined()
                             ? static_cast<uint16_t>(IntegerArg(info, 0, "minor", 0, GSF_PLUGIN_ABI_MINOR))
                             : static_cast<uint16_t>(GSF_PLUGIN_ABI_MINOR);
  ProcessPluginHost().SetHostMinorForTesting(minor);
  return Napi::Number::New(info.Env(), minor);
}

Napi::Value JsonToMsgpackJs(const Napi::CallbackInfo& info) {
  Utf8Arg text(info, 0, "text");
  std::string out, error;
  if (!JsonToMsgpack(text.view(), &out, &error)) ThrowCoded(info.Env(), ErrorKind::kTypeError, kErrArgument, error);
  return Napi::Buffer<uint8_t>::Copy(info.Env(), reinterpret_cast<const uint8_t*>(out.data()), out.size());
}

Napi::Value MsgpackToJsonJs(const Napi::CallbackInfo& info) {
  ByteView bytes = BytesArg(info, 0, "bytes", false);
  std::string out, error;
  bool undefined = false;
  if (!MsgpackToJson(View(bytes), &out, &error, &undefined)) {
    ThrowCoded(info.Env(), ErrorKind::kTypeError, kErrArgument, error);
  }
  if (undefined) return info.Env().Undefined();
  return Napi::String::New(info.Env(), out);
}

Napi::Value EncodeFrameJs(const Napi::CallbackInfo& info) {
  uint64_t session = UintArg(info, 0, "sessionId");
  Utf8Arg type(info, 1, "type");
  ByteView body = BytesArg(info, 2, "body", true);
  double id = 0;
  bool has_id = info.Length() > 3 && !info[3].IsUndefined();
  if (has_id) id = NumberArg(info, 3, "id");
  std::string out, error;
  bool msgpack = IsMsgpackSession(session);
  if (!EncodeFrame(msgpack, type.view(), View(body), has_id ? &id : nullptr, &out, &error)) {
    ThrowCoded(info.Env(), ErrorKind::kTypeError, kErrArgument, error);
  }
  if (msgpack) return Napi::Buffer<uint8_t>::Copy(info.Env(), reinterpret_cast<const uint8_t*>(out.data()), out.size());
  return Napi::String::New(info.Env(), out);
}

Napi::Value NamedTagJs(const Napi::CallbackInfo& info) {
  Utf8Arg name(info, 0, "name");
  return Napi::Number::New(info.Env(), static_cast<double>(NamedTag(name.view())));
}

Napi::Value RandomTagJs(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(RandomTag()));
}

Napi::Value CounterRemove(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  return Napi::Boolean::New(info.Env(), ProcessRuntime().counters.Remove(category.view(), name.view()));
}

// objectReadCached(type, id): what a native plugin's object_read_cached reads on this thread,
// {code, fields}: code 0 found (fields: its msgpack map), 1 no such object, 2 not answerable
// from the cache, 3 no such type.
Napi::Value ObjectReadCachedJs(const Napi::CallbackInfo& info) {
  Utf8Arg type(info, 0, "type");
  Utf8Arg id(info, 1, "id");
  CachedObjectReader reader = GetCachedObjectReader();
  if (reader == nullptr) ThrowCoded(info.Env(), ErrorKind::kError, kErrState, "no object cache reader in this process");
  std::string fields;
  const int code = reader(type.view(), id.view(), &fields);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("code", code);
  if (code == 0) o.Set("fields", Napi::Buffer<uint8_t>::Copy(info.Env(), reinterpret_cast<const uint8_t*>(fields.data()), fields.size()));
  return o;
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

void TestingBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<JsonToMsgpackJs>(env, exports, "jsonToMsgpack");
  Export<MsgpackToJsonJs>(env, exports, "msgpackToJson");
  Export<EncodeFrameJs>(env, exports, "pluginEncodeFrame");
  Export<NamedTagJs>(env, exports, "pluginNamedTag");
  Export<RandomTagJs>(env, exports, "pluginRandomTag");
  Export<CounterRemove>(env, exports, "counterRemove");
  Export<ObjectReadCachedJs>(env, exports, "objectReadCached");
  Export<PluginBenchCalls>(env, exports, "pluginBenchCalls");
  Export<PluginHostAbiMinorJs>(env, exports, "pluginHostAbiMinor");
}

}  // namespace gsf::binding
