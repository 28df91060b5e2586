// The JSON <-> msgpack transcoder, frame encoding and tags of native plugins, exposed so that
// tests can check them against JSON.parse, msgpackr, encodeFrame and namedTag.
#include "../core/event_tags.h"
#include "../core/json_msgpack.h"
#include "../core/session_frame.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

std::string_view View(const ByteView& b) { return {reinterpret_cast<const char*>(b.data), b.length}; }

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

}  // namespace

void TranscodeBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<JsonToMsgpackJs>(env, exports, "jsonToMsgpack");
  Export<MsgpackToJsonJs>(env, exports, "msgpackToJson");
  Export<EncodeFrameJs>(env, exports, "pluginEncodeFrame");
  Export<NamedTagJs>(env, exports, "pluginNamedTag");
  Export<RandomTagJs>(env, exports, "pluginRandomTag");
}

}  // namespace gsf::binding
