#include "../core/runtime.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

Napi::Value Intern(const Napi::CallbackInfo& info) {
  Utf8Arg name(info, 0, "name");
  return Napi::Number::New(info.Env(), ProcessRuntime().names.Intern(name.view()));
}

Napi::Value InternEventName(const Napi::CallbackInfo& info) {
  Utf8Arg name(info, 0, "name");
  return Napi::Number::New(info.Env(), ProcessRuntime().names.InternEventName(name.view()));
}

Napi::Value NameOf(const Napi::CallbackInfo& info) {
  double id = NumberArg(info, 0, "id");
  std::string name;
  if (id >= 1 && id <= 4294967295.0 && id == static_cast<double>(static_cast<uint32_t>(id))) {
    name = ProcessRuntime().names.NameOf(static_cast<uint32_t>(id));
  }
  return Napi::String::New(info.Env(), name);
}

}  // namespace

void NameTableBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<Intern>(env, exports, "intern");
  Export<InternEventName>(env, exports, "internEventName");
  Export<NameOf>(env, exports, "nameOf");
}

}  // namespace gsf::binding
