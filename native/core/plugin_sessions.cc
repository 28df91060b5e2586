// ABI 1.2 sessions and accounts (see plugin_sessions.h): the hook table, account continuations
// and the host services. Every callback runs inside Guard: nothing may unwind out of a C function.
#include "plugin_sessions.h"

#include "plugin_hooks.h"

#include <string>

#include "event_tags.h"
#include "json_msgpack.h"
#include "plugin_services.h"
#include "runtime.h"
#include "session_frame.h"

namespace gsf {

using hooks::Borrow;
using hooks::ReleaseData;
using hooks::Finish;
using hooks::RunHook;
namespace {

using namespace services;

}  // namespace

uint32_t SessionHost::AddHook(const NativePlugin* plugin, bool closed, gsf_on_session fn, void* user_data, gsf_on_drop drop) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  if (hooks_.size() >= kMaxHooks) return UINT32_MAX;
  Hook& h = hooks_.emplace_back();
  h.plugin = plugin;
  h.closed = closed;
  h.fn = fn;
  h.user_data = user_data;
  h.drop = drop;
  auto index = static_cast<uint32_t>(hooks_.size() - 1);
  hook_index_[index].store(&h, std::memory_order_release);
  return index;
}

std::vector<std::pair<uint32_t, bool>> SessionHost::HooksOf(std::string_view path) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  std::vector<std::pair<uint32_t, bool>> out;
  for (size_t i = 0; i < hooks_.size(); ++i) {
    const Hook& h = hooks_[i];
    if (h.plugin->path == path && !h.released.load(std::memory_order_acquire)) out.emplace_back(static_cast<uint32_t>(i), h.closed);
  }
  return out;
}

size_t SessionHost::ReleaseHooks(const NativePlugin* plugin) {
  std::vector<std::pair<gsf_on_drop, void*>> drops;
  {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    for (Hook& h : hooks_) {
      if ((plugin == nullptr || h.plugin == plugin) && !h.released.exchange(true)) drops.emplace_back(h.drop, h.user_data);
    }
  }
  for (auto& [drop, data] : drops) ReleaseData(drop, data);
  return drops.size();
}

CallResult SessionHost::CallHook(uint32_t index, const EventContext& event, const SessionHookInput& input, PluginEffects* effects) {
  Hook* h = index < kMaxHooks ? hook_index_[index].load(std::memory_order_acquire) : nullptr;
  if (!h) {
    CallResult r;
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.error = "no native session hook " + std::to_string(index);
    return r;
  }
  if (h->released.load(std::memory_order_acquire)) return CallResult{};
  gsf_type_session_info info;
  info.struct_size = sizeof info;
  const std::string_view none;
  info.close_code = h->closed ? input.close_code : 0;
  info.session_id = event.session_id;
  info.version = Borrow(h->closed ? none : input.version);
  info.codec = Borrow(h->closed ? none : input.codec);
  info.address = Borrow(h->closed ? none : input.address);
  info.reason = Borrow(h->closed ? input.reason : none);
  info.account = Borrow(h->closed ? input.account : none);
  std::string name = event.name_id != 0 ? Host().runtime().names.NameOf(event.name_id)
                                        : std::string(h->closed ? "_session_closed" : "_session_opened");
  gsf_type_event_info ev;
  ev.struct_size = sizeof ev;
  ev.kind = event.kind;
  ev.event_id = event.event_id;
  ev.tag = event.tag;
  ev.session_id = event.session_id;
  ev.name = Borrow(name);
  CallScope scope(h->plugin, effects, &event, false);
  gsf_type_status status = RunHook(scope, [&] { return h->fn(scope.call(), &ev, &info, h->user_data); });
  return Finish(scope.state(), status);
}

uint64_t SessionHost::AddContinuation(const NativePlugin* plugin, uint32_t op, std::string_view account, uint64_t session_id,
                                      gsf_on_account then, void* user_data, gsf_on_drop drop, uint64_t event_id,
                                      MessageOrigin origin) {
  return continuations_.Add(
      Continuation{plugin, op, std::string(account), session_id, then, user_data, drop, event_id, std::move(origin)});
}

CallResult SessionHost::Continue(uint64_t id, const EventContext& event, const AccountAnswer& answer, PluginEffects* effects) {
  Continuation c;
  if (!continuations_.Take(id, &c)) {
    CallResult r;
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.error = "no native account continuation " + std::to_string(id);
    return r;
  }
  gsf_type_account_result result;
  result.struct_size = sizeof result;
  result.op = c.op;
  result.login = 0;
  result.session_id = 0;
  result.account = Borrow(c.account);
  switch (c.op) {
    case GSF_ACCOUNT_LOGIN:
      result.login = answer.code;
      result.found = answer.code == GSF_LOGIN_OK ? 1 : 0;
      result.session_id = answer.code == GSF_LOGIN_NO_SESSION ? 0 : answer.session_id;
      break;
    case GSF_ACCOUNT_LOGOUT:
      result.found = answer.code != 0 ? 1 : 0;
      break;
    case GSF_ACCOUNT_LOCATE:
      result.found = answer.session_id != 0 ? 1 : 0;
      result.session_id = answer.session_id;
      break;
    default:  // GSF_ACCOUNT_OF_SESSION
      result.found = answer.has_account ? 1 : 0;
      result.session_id = c.session_id;
      result.account = Borrow(answer.has_account ? answer.account : std::string_view());
      break;
  }
  CallScope scope(c.plugin, effects, &event, false, &c.origin);
  gsf_type_status status = RunHook(scope, [&] { return c.fn(scope.call(), &result, c.user_data); });
  CallResult r = Finish(scope.state(), status);
  AnswersOrigin(r, c.origin);
  ReleaseData(c.drop, c.user_data);
  return r;
}

SessionHost& ProcessSessionHost() {
  static SessionHost* host = new SessionHost();  // never destroyed: event threads may outlive exit
  return *host;
}

namespace {

// A borrowed string that is empty or valid UTF-8 (a NULL pointer with a length is refused).
bool OptionalText(gsf_type_borrowed_str s) {
  if (s.len == 0) return true;
  return s.ptr != nullptr && ValidName(View(s));
}

bool ValidSession(uint64_t id) { return id != 0 && IsValidTag(id); }

std::string BadSession(const char* what, uint64_t id) {
  return std::string(what) + ": session id must be a positive integer below 2^53 (got " + std::to_string(id) + ")";
}

// The live call a session service acts for: any call with effects (init, events).
CallState* EffectsCall(gsf_type_call call, const char* what, gsf_type_status* status) {
  CallState* s = LiveCall(call, status);
  if (!s) return nullptr;
  if (!s->effects) {
    *status = Note(s, GSF_STATUS_UNAVAILABLE, std::string(what) + ": no running event");
    return nullptr;
  }
  return s;
}

// The live event call an account service acts for (init and plugin threads have no event).
CallState* AccountCall(gsf_type_call call, const char* what, gsf_type_status* status) {
  CallState* s = LiveCall(call, status);
  if (!s) return nullptr;
  if (s->init || !s->effects || s->event.event_id == 0) {
    *status = Note(s, GSF_STATUS_UNAVAILABLE, std::string(what) + ": account calls are made inside events");
    return nullptr;
  }
  return s;
}

gsf_type_status RegisterHook(gsf_type_call init, bool closed, gsf_on_session fn, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    const char* what = closed ? "register_session_closed" : "register_session_opened";
    CallState& s = ThisThreadCall();
    if (init.token == 0 || s.token.load(std::memory_order_relaxed) != init.token) return GSF_STATUS_UNAVAILABLE;
    if (!s.init) return Note(&s, GSF_STATUS_UNAVAILABLE, std::string(what) + ": hooks are registered during init only");
    if (!fn) return Note(&s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": no hook function");
    if (ProcessSessionHost().AddHook(s.plugin, closed, fn, user_data, drop) == UINT32_MAX) {
      return Note(&s, GSF_STATUS_RESOURCE_EXHAUSTED,
                  std::string(what) + ": more than " + std::to_string(SessionHost::kMaxHooks) + " native session hooks in the process");
    }
    return GSF_STATUS_OK;
  });
}

gsf_type_status RegisterOpened(gsf_type_call init, gsf_on_session fn, void* user_data, gsf_on_drop drop) {
  return RegisterHook(init, false, fn, user_data, drop);
}

gsf_type_status RegisterClosed(gsf_type_call init, gsf_on_session fn, void* user_data, gsf_on_drop drop) {
  return RegisterHook(init, true, fn, user_data, drop);
}

gsf_type_status Group(gsf_type_call call, bool join, uint64_t session_id, gsf_type_borrowed_str group) {
  return Guard([&]() -> gsf_type_status {
    const char* what = join ? "session_join" : "session_leave";
    gsf_type_status status;
    CallState* s = EffectsCall(call, what, &status);
    if (!s) return status;
    if (!ValidSession(session_id)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, BadSession(what, session_id));
    if (!Text(group)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": group must be non-empty UTF-8");
    s->effects->SessionGroup(session_id, View(group), join);
    return GSF_STATUS_OK;
  });
}

gsf_type_status SessionJoin(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str group) {
  return Group(call, true, session_id, group);
}

gsf_type_status SessionLeave(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str group) {
  return Group(call, false, session_id, group);
}

gsf_type_status SessionClose(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str reason) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = EffectsCall(call, "session_close", &status);
    if (!s) return status;
    if (!ValidSession(session_id)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, BadSession("session_close", session_id));
    if (!OptionalText(reason)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "session_close: reason must be UTF-8");
    s->effects->SessionClose(session_id, View(reason));
    return GSF_STATUS_OK;
  });
}

gsf_type_status Broadcast(gsf_type_call call, const uint64_t* session_ids, size_t count, gsf_type_borrowed_str type,
                          gsf_type_borrowed_bytes body) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = EffectsCall(call, "broadcast", &status);
    if (!s) return status;
    if (session_ids == nullptr && count != 0) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "broadcast: session_ids is NULL but count is " + std::to_string(count));
    }
    bool json = session_ids == nullptr, msgpack = session_ids == nullptr;
    for (size_t i = 0; i < count; ++i) {
      if (!ValidSession(session_ids[i])) {
        return Note(s, GSF_STATUS_INVALID_ARGUMENT, BadSession("broadcast", session_ids[i]) + " at index " + std::to_string(i));
      }
      (IsMsgpackSession(session_ids[i]) ? msgpack : json) = true;
    }
    if (body.ptr == nullptr && body.len != 0) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "broadcast: body is NULL but its length is not 0");
    // Both frames are encoded (and checked) even when only one codec's sessions are named.
    thread_local std::string frames[2];
    std::string error;
    for (int k = 0; k < 2; ++k) {
      frames[k].clear();
      if (!EncodeFrame(k == 1, View(type), View(body), nullptr, &frames[k], &error)) {
        return Note(s, GSF_STATUS_INVALID_ARGUMENT, "broadcast: " + error);
      }
    }
    if (session_ids != nullptr && count == 0) return GSF_STATUS_OK;  // nobody to send to, as a managed broadcast([])
    s->effects->Broadcast(session_ids, count, json ? std::string_view(frames[0]) : std::string_view(),
                          msgpack ? std::string_view(frames[1]) : std::string_view());
    return GSF_STATUS_OK;
  });
}

// Keeps the continuation (if any) and records the request; `then` NULL keeps nothing.
gsf_type_status Request(CallState* s, uint32_t op, std::string_view account, uint64_t session_id, gsf_on_account then,
                        void* user_data, gsf_on_drop drop) {
  uint64_t cont = then ? ProcessSessionHost().AddContinuation(s->plugin, op, account, session_id, then, user_data, drop,
                                                              s->event.event_id, OriginOf(*s))
                       : 0;
  s->effects->AccountRequest(op, cont, account, session_id);
  return GSF_STATUS_OK;
}

gsf_type_status AccountLogin(gsf_type_call call, gsf_type_borrowed_str account, uint64_t session_id, gsf_on_account then,
                             void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = AccountCall(call, "account_login", &status);
    if (!s) return status;
    if (!Text(account)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "account_login: account id must be non-empty UTF-8");
    uint64_t sid = session_id != 0 ? session_id : s->event.session_id;
    if (sid == 0) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "account_login: this event has no session; pass the session id");
    }
    if (!ValidSession(sid)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, BadSession("account_login", sid));
    return Request(s, GSF_ACCOUNT_LOGIN, View(account), sid, then, user_data, drop);
  });
}

gsf_type_status AccountByName(gsf_type_call call, uint32_t op, const char* what, gsf_type_borrowed_str account, gsf_on_account then,
                              void* user_data, gsf_on_drop drop, bool then_required) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = AccountCall(call, what, &status);
    if (!s) return status;
    if (!Text(account)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": account id must be non-empty UTF-8");
    if (then_required && !then) return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": no continuation");
    return Request(s, op, View(account), 0, then, user_data, drop);
  });
}

gsf_type_status AccountLogout(gsf_type_call call, gsf_type_borrowed_str account, gsf_on_account then, void* user_data,
                              gsf_on_drop drop) {
  return AccountByName(call, GSF_ACCOUNT_LOGOUT, "account_logout", account, then, user_data, drop, false);
}

gsf_type_status AccountLocate(gsf_type_call call, gsf_type_borrowed_str account, gsf_on_account then, void* user_data,
                              gsf_on_drop drop) {
  return AccountByName(call, GSF_ACCOUNT_LOCATE, "account_locate", account, then, user_data, drop, true);
}

gsf_type_status AccountOfSession(gsf_type_call call, uint64_t session_id, gsf_on_account then, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = AccountCall(call, "account_of_session", &status);
    if (!s) return status;
    if (!ValidSession(session_id)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, BadSession("account_of_session", session_id));
    if (!then) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "account_of_session: no continuation");
    return Request(s, GSF_ACCOUNT_OF_SESSION, std::string_view(), session_id, then, user_data, drop);
  });
}

}  // namespace

void FillSessionServices(gsf_type_host_api* api) {
  api->register_session_opened = RegisterOpened;
  api->register_session_closed = RegisterClosed;
  api->session_join = SessionJoin;
  api->session_leave = SessionLeave;
  api->session_close = SessionClose;
  api->broadcast = Broadcast;
  api->account_login = AccountLogin;
  api->account_logout = AccountLogout;
  api->account_locate = AccountLocate;
  api->account_of_session = AccountOfSession;
}

}  // namespace gsf
