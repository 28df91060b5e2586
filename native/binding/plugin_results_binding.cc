// ABI 1.2 declarations, result continuations and transactions of native plugins from JavaScript
// (src/plugins/native-results.ts): what a copy declared during init (flags, callable counters,
// monitors), reading a callable counter, continuing an event with a request's answer, and running
// and finishing a transaction's event.
#include <string>

#include "../core/plugin_results.h"
#include "bindings.h"
#include "boundary.h"
#include "in_call_answers.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

// pluginDeclarations(path): {flags: [[name, type, default (msgpack), description]...],
// callables: [[index, category, name, description]...], monitors: [[category, name, threshold]...]}.
Napi::Value PluginDeclarations(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Utf8Arg path(info, 0, "path");
  const NativePlugin* plugin = ProcessPluginHost().Find(path.view());
  if (!plugin) ThrowCoded(env, ErrorKind::kRangeError, kErrArgument, "no native plugin is loaded from " + std::string(path.view()));
  ResultHost& host = ProcessResultHost();
  const NativeDeclarations* d = host.FindDeclarations(plugin);
  Napi::Object out = Napi::Object::New(env);
  Napi::Array flags = Napi::Array::New(env), callables = Napi::Array::New(env), monitors = Napi::Array::New(env);
  if (d) {
    for (uint32_t i = 0; i < d->flags.size(); ++i) {
      const auto& f = d->flags[i];
      Napi::Array row = Napi::Array::New(env, 4);
      row.Set(0u, Napi::String::New(env, f.name));
      row.Set(1u, Napi::Number::New(env, f.type));
      row.Set(2u, Bytes(env, f.default_value));
      row.Set(3u, Napi::String::New(env, f.description));
      flags.Set(i, row);
    }
    for (uint32_t i = 0; i < d->callables.size(); ++i) {
      std::string category, name, description;
      host.CallableInfo(d->callables[i], &category, &name, &description);
      Napi::Array row = Napi::Array::New(env, 4);
      row.Set(0u, Napi::Number::New(env, d->callables[i]));
      row.Set(1u, Napi::String::New(env, category));
      row.Set(2u, Napi::String::New(env, name));
      row.Set(3u, Napi::String::New(env, description));
      callables.Set(i, row);
    }
    for (uint32_t i = 0; i < d->monitors.size(); ++i) {
      const auto& m = d->monitors[i];
      Napi::Array row = Napi::Array::New(env, 3);
      row.Set(0u, Napi::String::New(env, m.category));
      row.Set(1u, Napi::String::New(env, m.name));
      row.Set(2u, Napi::Number::New(env, m.threshold));
      monitors.Set(i, row);
    }
  }
  out.Set("flags", flags);
  out.Set("callables", callables);
  out.Set("monitors", monitors);
  return out;
}

// pluginReadCounter(index): the callable's value, or undefined (no value now); throws when it failed.
Napi::Value PluginReadCounter(const Napi::CallbackInfo& info) {
  uint32_t index = IdArg(info, 0, "index");
  double value = 0;
  std::string error;
  int got = ProcessResultHost().ReadCallable(index, &value, &error);
  if (got < 0) ThrowCoded(info.Env(), ErrorKind::kError, kErrArgument, error);
  return got == 0 ? info.Env().Undefined() : Napi::Number::New(info.Env(), value);
}

// pluginContinueResult(continuation, status, code, message, id, value | null, number): runs a
// result continuation for the event in the context cells.
Napi::Value PluginContinueResult(const Napi::CallbackInfo& info) {
  uint64_t cont = UintArg(info, 0, "continuation");
  ResultAnswer answer;
  answer.status = static_cast<gsf_type_status>(IntegerArg(info, 1, "status", 0, GSF_STATUS_EXPIRED));
  std::string code = OptionalString(info, 2, "code"), message = OptionalString(info, 3, "message");
  std::string id = OptionalString(info, 4, "id");
  ByteView value = BytesArg(info, 5, "value", true);
  answer.number = UintArg(info, 6, "number");
  answer.code = code;
  answer.message = message;
  answer.id = id;
  if (value.data) answer.value = std::string_view(reinterpret_cast<const char*>(value.data), value.length);
  EventContext ev = EventFromCells(ContextCells());
  CollectingEffects& fx = Collector();
  CallResult r = ProcessResultHost().Continue(cont, ev, answer, &fx);
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginDropResultContinuation(const Napi::CallbackInfo& info) {
  ProcessResultHost().DropContinuation(UintArg(info, 0, "continuation"));
  return info.Env().Undefined();
}

// pluginRunTransaction(key): runs a transaction's body for the event in the context cells.
Napi::Value PluginRunTransaction(const Napi::CallbackInfo& info) {
  uint64_t key = UintArg(info, 0, "key");
  EventContext ev = EventFromCells(ContextCells());
  CollectingEffects& fx = Collector();
  CallResult r = ProcessResultHost().RunTransaction(key, ev, &fx);
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

// pluginFinishTransaction(key, status, code, message): runs `done` (if any), then releases the user data.
Napi::Value PluginFinishTransaction(const Napi::CallbackInfo& info) {
  uint64_t key = UintArg(info, 0, "key");
  ResultAnswer answer;
  answer.status = static_cast<gsf_type_status>(IntegerArg(info, 1, "status", 0, GSF_STATUS_EXPIRED));
  std::string code = OptionalString(info, 2, "code"), message = OptionalString(info, 3, "message");
  answer.code = code;
  answer.message = message;
  EventContext ev = EventFromCells(ContextCells());
  CollectingEffects& fx = Collector();
  CallResult r = ProcessResultHost().FinishTransaction(key, ev, answer, &fx);
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginDropTransaction(const Napi::CallbackInfo& info) {
  ProcessResultHost().DropTransaction(UintArg(info, 0, "key"));
  return info.Env().Undefined();
}

// pluginResultHoldings(): [result continuations, transactions] kept (tests).
Napi::Value PluginResultHoldings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, static_cast<double>(ProcessResultHost().ContinuationCount())));
  out.Set(1u, Napi::Number::New(env, static_cast<double>(ProcessResultHost().TransactionCount())));
  return out;
}

}  // namespace

void PluginResultsBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<PluginDeclarations>(env, exports, "pluginDeclarations");
  Export<PluginReadCounter>(env, exports, "pluginReadCounter");
  Export<PluginContinueResult>(env, exports, "pluginContinueResult");
  Export<PluginDropResultContinuation>(env, exports, "pluginDropResultContinuation");
  Export<PluginRunTransaction>(env, exports, "pluginRunTransaction");
  Export<PluginFinishTransaction>(env, exports, "pluginFinishTransaction");
  Export<PluginDropTransaction>(env, exports, "pluginDropTransaction");
  Export<PluginResultHoldings>(env, exports, "pluginResultHoldings");
}

}  // namespace gsf::binding
