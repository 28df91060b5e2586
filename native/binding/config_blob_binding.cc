#include "../core/runtime.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

Napi::Value ConfigSet(const Napi::CallbackInfo& info) {
  Utf8Arg json(info, 0, "json");
  ProcessRuntime().config.Set(json.str());
  return info.Env().Undefined();
}

Napi::Value ConfigGet(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), ProcessRuntime().config.Get());
}

Napi::Value ConfigVersion(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().config.Version()));
}

}  // namespace

void ConfigBlobBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<ConfigSet>(env, exports, "configSet");
  Export<ConfigGet>(env, exports, "configGet");
  Export<ConfigVersion>(env, exports, "configVersion");
}

}  // namespace gsf::binding
