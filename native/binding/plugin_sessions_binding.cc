// Sessions and accounts of native plugins from JavaScript (ABI 1.2): a copy's session hooks,
// running one for a session event, and continuing an event with an account call's answer
// (src/plugins/native-sessions.ts).
#include <string>

#include "../core/plugin_sessions.h"
#include "../core/session_accounts.h"
#include "bindings.h"
#include "boundary.h"
#include "in_call_answers.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

// pluginSessionHooks(path): [[hook, closed], ...] of the copy loaded from `path`.
Napi::Value PluginSessionHooks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Utf8Arg path(info, 0, "path");
  auto hooks = ProcessSessionHost().HooksOf(path.view());
  Napi::Array out = Napi::Array::New(env, hooks.size());
  for (uint32_t i = 0; i < hooks.size(); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, Napi::Number::New(env, hooks[i].first));
    pair.Set(1u, Napi::Boolean::New(env, hooks[i].second));
    out.Set(i, pair);
  }
  return out;
}

// pluginCallSession(hook, closeCode, a, b, c): opened (version, codec, address), closed (reason, account | null).
Napi::Value PluginCallSession(const Napi::CallbackInfo& info) {
  uint32_t hook = IdArg(info, 0, "hook");
  uint64_t code = UintArg(info, 1, "closeCode");
  std::string a = OptionalString(info, 2, "a"), b = OptionalString(info, 3, "b"), c = OptionalString(info, 4, "c");
  EventContext ev = EventFromCells(ContextCells());
  SessionHookInput in;
  in.close_code = static_cast<uint32_t>(code);
  // The hook's kind picks which of these it sees.
  in.version = in.reason = a;
  in.codec = in.account = b;
  in.address = c;
  CollectingEffects& fx = Collector();
  CallResult r = ProcessSessionHost().CallHook(hook, ev, in, &fx);
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

// pluginContinueAccount(continuation, code, sessionId, account | null): runs an account continuation.
Napi::Value PluginContinueAccount(const Napi::CallbackInfo& info) {
  uint64_t cont = UintArg(info, 0, "continuation");
  AccountAnswer answer;
  answer.code = static_cast<uint32_t>(UintArg(info, 1, "code"));
  answer.session_id = UintArg(info, 2, "sessionId");
  answer.has_account = info.Length() > 3 && info[3].IsString();
  std::string account = OptionalString(info, 3, "account");
  answer.account = account;
  EventContext ev = EventFromCells(ContextCells());
  CollectingEffects& fx = Collector();
  CallResult r = ProcessSessionHost().Continue(cont, ev, answer, &fx);
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginDropAccountContinuation(const Napi::CallbackInfo& info) {
  ProcessSessionHost().DropContinuation(UintArg(info, 0, "continuation"));
  return info.Env().Undefined();
}

Napi::Value PluginAccountContinuations(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessSessionHost().ContinuationCount()));
}

// sessionAccountSet(sessionId, account | null): binds a session to its account, or unbinds it.
Napi::Value SessionAccountSet(const Napi::CallbackInfo& info) {
  uint64_t session = UintArg(info, 0, "sessionId");
  if (info.Length() > 1 && info[1].IsString()) {
    Utf8Arg account(info, 1, "account");
    ProcessSessionAccounts().Set(session, account.view());
  } else {
    ProcessSessionAccounts().Erase(session);
  }
  return info.Env().Undefined();
}

// sessionAccountChanging(delta): a login or logout sent to the account manager (+1), answered (-1).
Napi::Value SessionAccountChanging(const Napi::CallbackInfo& info) {
  ProcessSessionAccounts().Changing(static_cast<int>(IntegerArg(info, 0, "delta", -1, 1)));
  return info.Env().Undefined();
}

Napi::Value SessionAccountCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessSessionAccounts().Size()));
}

}  // namespace

void PluginSessionsBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<PluginSessionHooks>(env, exports, "pluginSessionHooks");
  Export<PluginCallSession>(env, exports, "pluginCallSession");
  Export<PluginContinueAccount>(env, exports, "pluginContinueAccount");
  Export<PluginDropAccountContinuation>(env, exports, "pluginDropAccountContinuation");
  Export<PluginAccountContinuations>(env, exports, "pluginAccountContinuations");
  Export<SessionAccountSet>(env, exports, "sessionAccountSet");
  Export<SessionAccountChanging>(env, exports, "sessionAccountChanging");
  Export<SessionAccountCount>(env, exports, "sessionAccountCount");
}

}  // namespace gsf::binding
