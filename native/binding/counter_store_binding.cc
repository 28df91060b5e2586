#include "../core/runtime.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

Napi::Value CounterUpdate(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  double value = NumberArg(info, 2, "value");
  bool is_double = BoolArg(info, 3, "isDouble");
  if (info.Length() > 4 && !info[4].IsUndefined()) {
    Utf8Arg description(info, 4, "description");
    std::string text = description.str();
    ProcessRuntime().counters.Update(category.view(), name.view(), value, is_double, &text);
  } else {
    ProcessRuntime().counters.Update(category.view(), name.view(), value, is_double);
  }
  return info.Env().Undefined();
}

Napi::Value CounterIncrease(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  double amount = NumberArg(info, 2, "amount");
  return Napi::Number::New(info.Env(), ProcessRuntime().counters.Increase(category.view(), name.view(), amount));
}

Napi::Value CounterDecrease(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  double amount = NumberArg(info, 2, "amount");
  return Napi::Number::New(info.Env(), ProcessRuntime().counters.Decrease(category.view(), name.view(), amount));
}

Napi::Value CounterReadInt(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  int64_t value;
  if (!ProcessRuntime().counters.ReadInt(category.view(), name.view(), &value)) return info.Env().Null();
  return Napi::Number::New(info.Env(), static_cast<double>(value));
}

Napi::Value CounterGet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  CounterValue v;
  if (!ProcessRuntime().counters.Get(category.view(), name.view(), &v)) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("type", v.is_double ? "double" : "int");
  o.Set("value", v.value);
  o.Set("description", v.description);
  return o;
}

// The value alone: the API service's hot path reads counters without building an object.
Napi::Value CounterValueOnly(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  double value;
  if (!ProcessRuntime().counters.Value(category.view(), name.view(), &value)) return info.Env().Null();
  return Napi::Number::New(info.Env(), value);
}

Napi::Value CounterHandle(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  Utf8Arg name(info, 1, "name");
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessRuntime().counters.Handle(category.view(), name.view())));
}

Napi::Value CounterValueAt(const Napi::CallbackInfo& info) {
  double id = IntegerArg(info, 0, "handle", -1, kMaxSafeInteger);
  double value;
  if (!ProcessRuntime().counters.ValueAt(static_cast<int64_t>(id), &value)) return info.Env().Null();
  return Napi::Number::New(info.Env(), value);
}

// Four bytes of process-lifetime memory; JS reads them with Atomics.load on an Int32Array.
Napi::Value CounterLayoutView(const Napi::CallbackInfo& info) {
  auto* address = const_cast<std::atomic<uint32_t>*>(ProcessRuntime().counters.LayoutGenerationAddress());
  return Napi::ArrayBuffer::New(info.Env(), static_cast<void*>(address), sizeof(*address));
}

Napi::Array ToJs(Napi::Env env, const std::vector<std::string>& names) {
  Napi::Array out = Napi::Array::New(env, names.size());
  for (size_t i = 0; i < names.size(); ++i) out.Set(static_cast<uint32_t>(i), names[i]);
  return out;
}

Napi::Value CounterCategories(const Napi::CallbackInfo& info) {
  return ToJs(info.Env(), ProcessRuntime().counters.Categories());
}

Napi::Value CounterList(const Napi::CallbackInfo& info) {
  Utf8Arg category(info, 0, "category");
  std::vector<std::string> names;
  if (!ProcessRuntime().counters.List(category.view(), &names)) return info.Env().Null();
  return ToJs(info.Env(), names);
}

}  // namespace

void CounterStoreBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<CounterUpdate>(env, exports, "counterUpdate");
  Export<CounterIncrease>(env, exports, "counterIncrease");
  Export<CounterDecrease>(env, exports, "counterDecrease");
  Export<CounterReadInt>(env, exports, "counterReadInt");
  Export<CounterGet>(env, exports, "counterGet");
  Export<CounterValueOnly>(env, exports, "counterValue");
  Export<CounterCategories>(env, exports, "counterCategories");
  Export<CounterList>(env, exports, "counterList");
  Export<CounterHandle>(env, exports, "counterHandle");
  Export<CounterValueAt>(env, exports, "counterValueAt");
  Export<CounterLayoutView>(env, exports, "counterLayoutView");
}

}  // namespace gsf::binding
