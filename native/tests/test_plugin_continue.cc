// Continuations answer the client message their handler ran for (native-continue fixture of the
// integration tests): a reply from an object, account or result continuation, or from a chain of
// them, carries the request's type and id; a failing continuation's result carries the request id
// (its failure frame does); a continuation of a call that handles no message still cannot reply.
#include <string>
#include <vector>

#include "../core/plugin_api.h"
#include "../core/plugin_results.h"
#include "../core/plugin_sessions.h"
#include "check.h"
#include "plugin_helpers.h"

namespace plugin_continue_test {

namespace {

const std::string kPath = FixturePath("native_continue");
const uint64_t kSession = (1ull << 40) + 10;  // even: a JSON session

/** The continuation each kind of request kept, and the frames sent. */
struct Requests : Collected {
  uint64_t object = 0, account = 0, result = 0;
  void ObjectRequest(int, uint64_t continuation, std::string_view, std::string_view, std::string_view, uint32_t) override {
    if (continuation) object = continuation;
  }
  void AccountRequest(uint32_t, uint64_t continuation, std::string_view, uint64_t) override { account = continuation; }
  void ServiceRequest(uint32_t, uint64_t continuation, std::string_view) override { result = continuation; }
};

gsf::CallResult Message(const std::string& type, const std::string& rest, Requests* fx, uint64_t event_id) {
  const gsf::NativePlugin* p = TryLoad(kPath);
  gsf::EventContext ev = Event(event_id, kSession, GSF_EVENT_NETWORK, kSession, type);
  return gsf::ProcessPluginHost().CallMessage(HandlerOf(*p, type), ev, "{\"type\":\"" + type + "\"" + rest + "}", fx);
}

gsf::EventContext Later(uint64_t event_id, const std::string& type) {
  return Event(event_id, kSession, GSF_EVENT_NETWORK, kSession, type);
}

/** An of_session answer: `name` must outlive it (the tests pass literals). */
gsf::AccountAnswer Account(std::string_view name) {
  gsf::AccountAnswer a;
  a.has_account = true;
  a.account = name;
  return a;
}

gsf_type_status reply_status = GSF_STATUS_OK;
gsf_type_status ReplyFromResult(gsf_type_call call, const gsf_type_call_result*, void*) {
  reply_status = gsf::ProcessPluginHost().Api()->reply(call, gsf_str("x"), gsf_bytes("\x80", 1));
  return GSF_STATUS_OK;
}

}  // namespace

TEST(continuations_reply_to_the_message_with_its_type_and_id) {
  REQUIRE(TryLoad(kPath) != nullptr);
  // An object continuation.
  Requests first, later;
  CHECK_EQ(Message("nc.fetch", ",\"id\":7,\"body\":{\"id\":\"x\"}", &first, 801).status, GSF_STATUS_OK);
  CHECK(first.sends.empty());
  REQUIRE(first.object != 0);
  gsf::CallResult r = gsf::ProcessApiHost().Continue(first.object, Later(801, "nc.fetch"), false, "", "", &later);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK(r.replied);
  REQUIRE(later.sends.size() == 1);
  CHECK_EQ(later.sends[0].frame, std::string("{\"type\":\"nc.fetch\",\"body\":{\"found\":false},\"id\":7}"));
  CHECK_EQ(later.sends[0].session, kSession);
  // A result continuation.
  Requests create, created;
  CHECK_EQ(Message("nc.create", ",\"id\":8,\"body\":{\"name\":\"n\"}", &create, 802).status, GSF_STATUS_OK);
  REQUIRE(create.result != 0);
  gsf::ResultAnswer ok;
  ok.id = "p-1";
  r = gsf::ProcessResultHost().Continue(create.result, Later(802, "nc.create"), ok, &created);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(created.sends.size() == 1);
  CHECK_EQ(created.sends[0].frame, std::string("{\"type\":\"nc.create\",\"body\":{\"status\":0,\"id\":true},\"id\":8}"));
  // Account continuations, the second asked by the first: both answer request 9.
  Requests login, step, last;
  CHECK_EQ(Message("nc.login", ",\"id\":9,\"body\":{\"account\":\"ada\"}", &login, 803).status, GSF_STATUS_OK);
  REQUIRE(login.account != 0);
  gsf::AccountAnswer logged;
  logged.code = GSF_LOGIN_OK;
  r = gsf::ProcessSessionHost().Continue(login.account, Later(803, "nc.login"), logged, &step);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK(step.sends.empty());
  REQUIRE(step.account != 0);
  r = gsf::ProcessSessionHost().Continue(step.account, Later(803, "nc.login"), Account("ada"), &last);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(last.sends.size() == 1);
  CHECK_EQ(last.sends[0].frame, std::string("{\"type\":\"nc.login\",\"body\":{\"login\":0,\"account\":\"ada\"},\"id\":9}"));
}

TEST(continuations_keep_the_message_across_kinds_and_without_an_id) {
  REQUIRE(TryLoad(kPath) != nullptr);
  // An account answer, then an object, then a result: the last continuation answers the message.
  Requests chain, a, b, c;
  CHECK_EQ(Message("nc.chain", ",\"body\":{\"name\":\"bo\"}", &chain, 804).status, GSF_STATUS_OK);
  REQUIRE(chain.account != 0);
  CHECK_EQ(gsf::ProcessSessionHost().Continue(chain.account, Later(804, "nc.chain"), Account("bo"), &a).status, GSF_STATUS_OK);
  REQUIRE(a.object != 0);
  gsf::CallResult middle = gsf::ProcessApiHost().Continue(a.object, Later(804, "nc.chain"), false, "", "", &b);
  CHECK_EQ(middle.status, GSF_STATUS_OK);
  CHECK(!middle.replied);  // it asked for the next step; the last one replies
  REQUIRE(b.result != 0);
  gsf::ResultAnswer ok;
  ok.id = "p-2";
  CHECK_EQ(gsf::ProcessResultHost().Continue(b.result, Later(804, "nc.chain"), ok, &c).status, GSF_STATUS_OK);
  REQUIRE(c.sends.size() == 1);
  // The message had no id: neither has the reply.
  CHECK_EQ(c.sends[0].frame, std::string("{\"type\":\"nc.chain\",\"body\":{\"steps\":3,\"account\":\"bo\",\"found\":false}}"));
}

TEST(a_failing_continuation_carries_the_request_id) {
  REQUIRE(TryLoad(kPath) != nullptr);
  Requests fail, a, b;
  CHECK_EQ(Message("nc.fail", ",\"id\":10", &fail, 805).status, GSF_STATUS_OK);
  REQUIRE(fail.object != 0);
  CHECK_EQ(gsf::ProcessApiHost().Continue(fail.object, Later(805, "nc.fail"), false, "", "", &a).status, GSF_STATUS_OK);
  REQUIRE(a.account != 0);
  gsf::CallResult r = gsf::ProcessSessionHost().Continue(a.account, Later(805, "nc.fail"), Account("x"), &b);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(r.error, std::string("nc.fail gave up after the account answer"));
  CHECK(r.has_message_id);
  CHECK_EQ(r.message_id, 10.0);
}

TEST(a_continuation_of_a_call_without_a_message_cannot_reply) {
  static gsf::NativePlugin plugin;
  plugin.name = "continue-fake";
  Requests fx, later;
  gsf::EventContext ev = Event(806, 1ull << 34, GSF_EVENT_USER, kSession, "continue.event");
  {
    gsf::CallScope scope(&plugin, &fx, &ev, false);
    CHECK_EQ(gsf::ProcessPluginHost().Api()->auth_authenticate(scope.call(), gsf_bytes("\x80", 1), ReplyFromResult, nullptr, nullptr),
             GSF_STATUS_OK);
  }
  REQUIRE(fx.result != 0);
  gsf::CallResult r = gsf::ProcessResultHost().Continue(fx.result, ev, gsf::ResultAnswer(), &later);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(reply_status, GSF_STATUS_UNAVAILABLE);
  CHECK(!r.has_message_id);
  CHECK(later.sends.empty());
}

/** The names of the events queued since the last drain, in push order. */
std::vector<std::string> QueuedNames() {
  std::vector<std::string> names;
  for (const QueuedEvent& e : DrainQueue()) names.push_back(e.name);
  return names;
}

TEST(continuations_number_the_event_s_children_on_from_its_earlier_calls) {
  REQUIRE(TryLoad(kPath) != nullptr);
  DrainQueue();
  // The handler: a default child, then a named one (it counts too, SPEC 6.3).
  Requests first, second, third;
  gsf::CallResult r = Message("nc.children", ",\"id\":30", &first, 807);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(r.children, 2);
  REQUIRE(first.account != 0);
  CHECK(QueuedNames() == std::vector<std::string>({"nc.children_#1", "nc.named-child"}));
  // Its continuation goes on from the count the handler reached, as does the one it asks for.
  gsf::EventContext later = Later(807, "nc.children");
  later.children = static_cast<uint32_t>(r.children);
  r = gsf::ProcessSessionHost().Continue(first.account, later, Account("x"), &second);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(r.children, 3);
  REQUIRE(second.account != 0);
  later.children = static_cast<uint32_t>(r.children);
  r = gsf::ProcessSessionHost().Continue(second.account, later, Account("x"), &third);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(r.children, 4);
  CHECK(r.replied);
  CHECK(QueuedNames() == std::vector<std::string>({"nc.children_#3", "nc.children_#4"}));
}

TEST(a_call_names_children_on_from_the_count_its_event_brings) {
  REQUIRE(TryLoad(kPath) != nullptr);
  DrainQueue();
  // An event whose other handlers (a managed one, an earlier native call) created five children.
  Requests first, second;
  const gsf::NativePlugin* p = TryLoad(kPath);
  gsf::EventContext ev = Later(808, "nc.children");
  ev.children = 5;
  gsf::CallResult r = gsf::ProcessPluginHost().CallMessage(HandlerOf(*p, "nc.children"), ev, "{\"type\":\"nc.children\"}", &first);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(r.children, 7);
  REQUIRE(first.account != 0);
  CHECK(QueuedNames() == std::vector<std::string>({"nc.children_#6", "nc.named-child"}));
  // A continuation given a count it did not reach itself goes on from that count.
  ev.children = 10;
  r = gsf::ProcessSessionHost().Continue(first.account, ev, Account("x"), &second);
  CHECK_EQ(r.children, 11);
  CHECK(QueuedNames() == std::vector<std::string>({"nc.children_#11"}));
  // A call that reached no plugin code reports no count (-1): the event keeps its own.
  r = gsf::ProcessSessionHost().Continue(second.account + 1000000, ev, Account("x"), &second);
  CHECK(r.status != GSF_STATUS_OK);
  CHECK_EQ(r.children, -1);
  gsf::ProcessSessionHost().DropContinuation(second.account);
}

}  // namespace plugin_continue_test
