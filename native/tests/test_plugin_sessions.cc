// ABI 1.2 sessions and accounts (plugin_sessions.cc) with the session-native fixture of the
// integration tests: every refused argument's status and text, the effect records the accepted
// calls make, the session hooks, and account continuations run or dropped once each.
#include <string>
#include <vector>

#include "../core/json_msgpack.h"
#include "../core/plugin_sessions.h"
#include "check.h"
#include "plugin_helpers.h"

namespace plugin_sessions_test {

namespace {

std::string Mp(const std::string& json) {
  std::string out, error;
  gsf::JsonToMsgpack(json, &out, &error);
  return out;
}

/** Collected plus the 1.2 session and account records, as text. */
struct SessionEffects : Collected {
  std::vector<std::string> records;
  void SessionGroup(uint64_t session, std::string_view group, bool join) override {
    records.push_back((join ? "join " : "leave ") + std::to_string(session) + " " + std::string(group));
  }
  void SessionClose(uint64_t session, std::string_view reason) override {
    records.push_back("close " + std::to_string(session) + " " + std::string(reason));
  }
  void Broadcast(const uint64_t* ids, size_t count, std::string_view json, std::string_view msgpack) override {
    std::string r = ids ? "broadcast " + std::to_string(count) : std::string("broadcast all");
    records.push_back(r + " " + std::string(json) + " " + std::to_string(msgpack.size()));
  }
  void AccountRequest(uint32_t op, uint64_t continuation, std::string_view account, uint64_t session) override {
    records.push_back("account " + std::to_string(op) + " " + std::string(account) + " " + std::to_string(session) +
                      (continuation ? " then" : ""));
    last_continuation = continuation;
  }
  uint64_t last_continuation = 0;
};

const std::string kPath = FixturePath("session_native");
const uint64_t kSession = (1ull << 40) + 2;

gsf::CallResult Check(const std::string& name, uint64_t session = kSession, SessionEffects* fx = nullptr) {
  SessionEffects scratch;
  const gsf::NativePlugin* p = TryLoad(kPath);
  gsf::EventContext ev = Event(700, session ? session : 5000, session ? GSF_EVENT_NETWORK : GSF_EVENT_USER, session, "sn.check");
  return gsf::ProcessPluginHost().CallEvent(HandlerOf(*p, "sn.check"), ev, Mp("\"" + name + "\""), fx ? fx : &scratch);
}

}  // namespace

TEST(sessions_refused_arguments_name_the_function_and_what_is_wrong) {
  std::string reason, message;
  REQUIRE(TryLoad(kPath, &reason, &message) != nullptr);
  const std::string big = "9007199254740992";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"join_zero", "session_join: session id must be a positive integer below 2^53 (got 0)"},
      {"join_big", "session_join: session id must be a positive integer below 2^53 (got " + big + ")"},
      {"join_empty_group", "session_join: group must be non-empty UTF-8"},
      {"leave_bad_utf8", "session_leave: group must be non-empty UTF-8"},
      {"leave_null_group", "session_leave: group must be non-empty UTF-8"},
      {"close_zero", "session_close: session id must be a positive integer below 2^53 (got 0)"},
      {"close_bad_reason", "session_close: reason must be UTF-8"},
      {"close_null_reason", "session_close: reason must be UTF-8"},
      {"broadcast_null_ids", "broadcast: session_ids is NULL but count is 2"},
      {"broadcast_bad_id", "broadcast: session id must be a positive integer below 2^53 (got 0) at index 1"},
      {"broadcast_empty_type", "broadcast: message type must be a non-empty UTF-8 string"},
      // NULL with a length (a buffer the plugin lost) is refused, not taken for an empty body.
      {"send_null_body", "send: body is NULL but its length is not 0"},
      {"publish_null_body", "publish: body is NULL but its length is not 0"},
      {"invoke_null_payload", "invoke: payload is NULL but its length is not 0"},
      {"timer_null_payload", "timer_after: payload is NULL but its length is not 0"},
      {"login_empty_account", "account_login: account id must be non-empty UTF-8"},
      {"login_big_session", "account_login: session id must be a positive integer below 2^53 (got " + big + ")"},
      {"logout_bad_utf8", "account_logout: account id must be non-empty UTF-8"},
      {"locate_no_then", "account_locate: no continuation"},
      {"whose_zero", "account_of_session: session id must be a positive integer below 2^53 (got 0)"},
      {"whose_no_then", "account_of_session: no continuation"},
  };
  for (const auto& [name, text] : cases) {
    gsf::CallResult r = Check(name);
    CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
    CHECK_EQ(r.error, text);
  }
  gsf::CallResult r = Check("broadcast_bad_body");
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK(r.error.rfind("broadcast: ", 0) == 0);
  // An event without a session must name the session to log in.
  r = Check("login_no_session", 0);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(r.error, std::string("account_login: this event has no session; pass the session id"));
  r = Check("register_outside_init");
  CHECK_EQ(r.status, GSF_STATUS_UNAVAILABLE);
  CHECK_EQ(r.error, std::string("register_session_opened: hooks are registered during init only"));
  // A call that ended (the init's) is refused: EXPIRED, and nothing is recorded.
  SessionEffects fx;
  r = Check("join_ended_call", kSession, &fx);
  CHECK_EQ(r.status, GSF_STATUS_EXPIRED);
  CHECK(fx.records.empty());
  // Nothing was kept for a refused account call.
  CHECK_EQ(gsf::ProcessSessionHost().ContinuationCount(), static_cast<size_t>(0));
}

TEST(sessions_hooks_run_with_the_session_and_account_continuations_once) {
  const gsf::NativePlugin* p = TryLoad(kPath);
  REQUIRE(p != nullptr);
  auto hooks = gsf::ProcessSessionHost().HooksOf(p->path);
  REQUIRE(hooks.size() == 2);
  CHECK(!hooks[0].second);
  CHECK(hooks[1].second);
  // The opened hook sends sn.opened to the session; the closed one publishes sn.closed.
  SessionEffects fx;
  gsf::SessionHookInput in;
  in.version = "1.0.0";
  in.codec = "json";
  in.address = "127.0.0.1";
  gsf::EventContext ev = Event(701, kSession, GSF_EVENT_ENGINE, kSession, "_session_opened");
  gsf::CallResult r = gsf::ProcessSessionHost().CallHook(hooks[0].first, ev, in, &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(fx.sends.size() == 1);
  CHECK_EQ(fx.sends[0].session, kSession);
  CHECK(fx.sends[0].frame.find("\"name\":\"_session_opened\"") != std::string::npos);
  CHECK(fx.sends[0].frame.find("\"codec\":\"json\"") != std::string::npos);
  in.close_code = 4009;
  in.reason = "replaced";
  in.account = "ada";
  ev = Event(702, kSession, GSF_EVENT_ENGINE, kSession, "_session_closed");
  r = gsf::ProcessSessionHost().CallHook(hooks[1].first, ev, in, &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(fx.publishes.size() == 1);
  CHECK(fx.publishes[0].find("watchers|") == 0);
  CHECK(fx.publishes[0].find("\"code\":4009,\"reason\":\"replaced\",\"account\":\"ada\"") != std::string::npos);
  // A login records its request; the answer runs the continuation, whose user data is then released.
  double kept = 0, drops = 0;
  gsf::ProcessRuntime().counters.Value("session_native", "drops", &drops);
  ev = Event(703, kSession, GSF_EVENT_NETWORK, kSession, "sn.login");
  gsf::ProcessRuntime().counters.Value("session_native", "kept", &kept);
  SessionEffects login;
  std::string frame = "{\"type\":\"sn.login\",\"body\":{\"account\":\"ada\"}}";
  r = gsf::ProcessPluginHost().CallMessage(HandlerOf(*p, "sn.login"), ev, frame, &login);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(login.records.size() == 1);
  CHECK_EQ(login.records[0], "account 0 ada " + std::to_string(kSession) + " then");
  CHECK_EQ(gsf::ProcessSessionHost().ContinuationCount(), static_cast<size_t>(1));
  gsf::AccountAnswer answer;
  answer.code = GSF_LOGIN_ALREADY_LOGGED_IN;
  answer.session_id = 42;
  SessionEffects after;
  r = gsf::ProcessSessionHost().Continue(login.last_continuation, ev, answer, &after);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(after.sends.size() == 1);
  CHECK(after.sends[0].frame.find("\"op\":0,\"found\":false,\"login\":1,\"session\":42,\"account\":\"ada\"") != std::string::npos);
  double now = 0;
  gsf::ProcessRuntime().counters.Value("session_native", "drops", &now);
  CHECK_EQ(now, drops + 1);
  // A second answer finds nothing; a continuation of a timed-out event is released, never run.
  r = gsf::ProcessSessionHost().Continue(login.last_continuation, ev, answer, &after);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  ev = Event(704, kSession, GSF_EVENT_NETWORK, kSession, "sn.locate");
  frame = "{\"type\":\"sn.locate\",\"body\":{\"account\":\"ada\"}}";
  r = gsf::ProcessPluginHost().CallMessage(HandlerOf(*p, "sn.locate"), ev, frame, &login);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  gsf::ProcessPluginHost().Revoke(704);
  CHECK_EQ(gsf::ProcessSessionHost().ContinuationCount(), static_cast<size_t>(0));
  gsf::ProcessRuntime().counters.Value("session_native", "drops", &now);
  CHECK_EQ(now, drops + 2);
}

}  // namespace plugin_sessions_test
