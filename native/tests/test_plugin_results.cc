// ABI 1.2 objects outside events, declarations, cluster and authenticator calls: the argument
// checks of each host service, and every piece of user data released exactly once (ran, dropped,
// its event timed out, its copy ended).
#include <cmath>
#include <string>

#include "../core/plugin_results.h"
#include "check.h"
#include "plugin_helpers.h"

namespace plugin_results_test {

namespace {

struct Services : Collected {
  int requests = 0;
  uint32_t last_op = 0;
  uint64_t last_continuation = 0;
  std::string last_args;
  void ServiceRequest(uint32_t op, uint64_t continuation, std::string_view args) override {
    requests++;
    last_op = op;
    last_continuation = continuation;
    last_args.assign(args);
  }
};

int drops = 0;
void Drop(void*) { drops++; }
gsf_type_status Then(gsf_type_call, const gsf_type_call_result* r, void*) { return r->status == GSF_STATUS_OK ? GSF_STATUS_OK : GSF_STATUS_INTERNAL; }
gsf_type_status Body(gsf_type_call, const gsf_type_event_info*, void*) { return GSF_STATUS_OK; }
gsf_type_status Counter(gsf_type_borrowed_str, gsf_type_borrowed_str, double* v, void*) {
  *v = 12.5;
  return GSF_STATUS_OK;
}

gsf::NativePlugin& Fake() {
  static gsf::NativePlugin* p = [] {
    auto* plugin = new gsf::NativePlugin();
    plugin->name = "results-fake";
    plugin->path = "/nowhere/results-fake.so";
    return plugin;
  }();
  return *p;
}

const gsf_type_host_api* Api() { return gsf::ProcessPluginHost().Api(); }

}  // namespace

TEST(results_requests_are_made_inside_events_with_checked_arguments) {
  const gsf_type_host_api* api = Api();
  Services fx;
  // No call, or an init call: no event to make the request in.
  CHECK_EQ(api->object_create(gsf_no_call(), gsf_str("T"), gsf_str(""), gsf_bytes(nullptr, 0), nullptr, nullptr, nullptr), GSF_STATUS_UNAVAILABLE);
  {
    gsf::EventContext none;
    gsf::CallScope init(&Fake(), &fx, &none, true);
    CHECK_EQ(api->cluster_invoke(init.call(), gsf_str("s"), gsf_str("e"), gsf_bytes(nullptr, 0), nullptr, Then, nullptr, Drop), GSF_STATUS_UNAVAILABLE);
    CHECK(init.state().error.find("cluster_invoke of plugin 'results-fake'") == 0);
  }
  gsf::EventContext ev = Event(9001, (1ull << 33), GSF_EVENT_USER, 0, "results.test");
  gsf::CallScope scope(&Fake(), &fx, &ev, false);
  gsf_type_call call = scope.call();
  // object_create: type, id, fields.
  CHECK_EQ(api->object_create(call, gsf_str(""), gsf_str(""), gsf_bytes(nullptr, 0), nullptr, nullptr, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->object_create(call, gsf_str("T"), gsf_str("\xff"), gsf_bytes(nullptr, 0), nullptr, nullptr, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->object_create(call, gsf_str("T"), gsf_str(""), gsf_bytes(nullptr, 3), nullptr, nullptr, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->object_create(call, gsf_str("T"), gsf_str(""), gsf_bytes("\x91\x01", 2), nullptr, nullptr, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK(scope.state().error.find("fields must be one msgpack map") != std::string::npos);
  CHECK_EQ(fx.requests, 0);
  drops = 0;
  // Without a continuation the user data is released at once; with one it is kept.
  CHECK_EQ(api->object_create(call, gsf_str("T"), gsf_str("id-1"), gsf_bytes("\x81\xa1n\x01", 4), nullptr, nullptr, Drop), GSF_STATUS_OK);
  CHECK_EQ(drops, 1);
  CHECK_EQ(fx.last_op, gsf::kServiceCreate);
  CHECK_EQ(fx.last_args, std::string("\x93\xa1T\xa4id-1\x81\xa1n\x01"));
  CHECK_EQ(api->object_create(call, gsf_str("T"), gsf_str(""), gsf_bytes(nullptr, 0), Then, nullptr, Drop), GSF_STATUS_OK);
  CHECK(fx.last_continuation >= gsf::ResultHost::kFirstContinuation);
  CHECK_EQ(fx.last_args, std::string("\x93\xa1T\xc0\xc0"));
  // object_delete.
  CHECK_EQ(api->object_delete(call, gsf_str("T"), gsf_str("")), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->object_delete(call, gsf_str("T"), gsf_str("id-1")), GSF_STATUS_OK);
  CHECK_EQ(fx.last_op, gsf::kServiceDelete);
  // Cluster calls.
  CHECK_EQ(api->cluster_invoke(call, gsf_str(""), gsf_str("e"), gsf_bytes(nullptr, 0), nullptr, Then, nullptr, Drop), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->cluster_invoke(call, gsf_str("s"), gsf_str("e"), gsf_bytes("\xc1", 1), nullptr, Then, nullptr, Drop), GSF_STATUS_INVALID_ARGUMENT);
  gsf_type_invoke_options o = gsf_invoke_options();
  o.tag_mode = 99;
  CHECK_EQ(api->cluster_invoke(call, gsf_str("s"), gsf_str("e"), gsf_bytes(nullptr, 0), &o, Then, nullptr, Drop), GSF_STATUS_INVALID_ARGUMENT);
  o.tag_mode = GSF_TAG_MODE_VALUE;
  o.tag = 1ull << 60;
  CHECK_EQ(api->cluster_invoke(call, gsf_str("s"), gsf_str("e"), gsf_bytes(nullptr, 0), &o, Then, nullptr, Drop), GSF_STATUS_INVALID_ARGUMENT);
  o.tag = 42;
  CHECK_EQ(api->cluster_invoke(call, gsf_str("s"), gsf_str("e"), gsf_bytes("\x01", 1), &o, Then, nullptr, Drop), GSF_STATUS_OK);
  CHECK_EQ(fx.last_args, std::string("\x95\xa1s\xa1" "e\x01\x2a\xc0"));
  CHECK_EQ(api->cluster_send_to_account(call, gsf_str("acc"), gsf_str(""), gsf_bytes(nullptr, 0), nullptr, nullptr, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->cluster_send_to_account(call, gsf_str("acc"), gsf_str("t"), gsf_bytes(nullptr, 0), nullptr, nullptr, nullptr), GSF_STATUS_OK);
  // Authenticator calls: a map, and a continuation.
  CHECK_EQ(api->auth_authenticate(call, gsf_bytes("\x90", 1), Then, nullptr, Drop), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->auth_personal_info(call, gsf_bytes("\x80", 1), nullptr, nullptr, Drop), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->auth_authenticate(call, gsf_bytes("\x80", 1), Then, nullptr, Drop), GSF_STATUS_OK);
  CHECK_EQ(fx.last_op, gsf::kServiceAuthenticate);
  CHECK_EQ(drops, 1);
  // The event times out: every continuation it kept (create, invoke, authenticate) is released once.
  CHECK_EQ(gsf::ProcessResultHost().DropEventContinuations(9001), 3u);
  CHECK_EQ(drops, 4);
  CHECK_EQ(gsf::ProcessResultHost().DropEventContinuations(9001), 0u);
}

TEST(results_continuation_runs_once_then_releases) {
  const gsf_type_host_api* api = Api();
  Services fx;
  gsf::EventContext ev = Event(9002, (1ull << 33), GSF_EVENT_USER, 0, "results.test");
  uint64_t id;
  {
    gsf::CallScope scope(&Fake(), &fx, &ev, false);
    drops = 0;
    CHECK_EQ(api->auth_authenticate(scope.call(), gsf_bytes("\x80", 1), Then, nullptr, Drop), GSF_STATUS_OK);
    id = fx.last_continuation;
  }
  gsf::ResultAnswer failed;
  failed.status = GSF_STATUS_UNAVAILABLE;
  failed.code = "GSF_ERR_AUTH_TIMEOUT";
  gsf::CallResult r = gsf::ProcessResultHost().Continue(id, ev, failed, &fx);
  CHECK_EQ(r.status, GSF_STATUS_INTERNAL);  // the continuation saw the failure
  CHECK_EQ(drops, 1);
  CHECK_EQ(gsf::ProcessResultHost().Continue(id, ev, failed, &fx).status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(drops, 1);
}

TEST(results_read_cached_and_transact_checks) {
  const gsf_type_host_api* api = Api();
  gsf_type_host_bytes out{reinterpret_cast<uint8_t*>(1), 7};
  CHECK_EQ(api->object_read_cached(gsf_no_call(), gsf_str("T"), gsf_str("x"), nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->object_read_cached(gsf_no_call(), gsf_str(""), gsf_str("x"), &out), GSF_STATUS_INVALID_ARGUMENT);
  CHECK(out.ptr == nullptr && out.len == 0);
  // The core tests have no addon: no object cache in the process.
  CHECK_EQ(api->object_read_cached(gsf_no_call(), gsf_str("T"), gsf_str("x"), &out), GSF_STATUS_UNAVAILABLE);
  // A transaction needs a function and a call of the plugin.
  CHECK_EQ(api->object_transact(gsf_no_call(), nullptr, Body, nullptr, nullptr, Drop, nullptr), GSF_STATUS_UNAVAILABLE);
  Services fx;
  gsf::EventContext none;
  gsf::CallScope scope(&Fake(), &fx, &none, false);
  CHECK_EQ(api->object_transact(scope.call(), nullptr, nullptr, nullptr, nullptr, Drop, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  gsf_type_invoke_options o = gsf_invoke_options();
  o.struct_size = 4;
  CHECK_EQ(api->object_transact(scope.call(), &o, Body, nullptr, nullptr, Drop, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(gsf::ProcessResultHost().TransactionCount(), 0u);
}

TEST(results_declarations_are_made_in_init_only) {
  const gsf_type_host_api* api = Api();
  Services fx;
  gsf::EventContext none;
  {
    gsf::CallScope event(&Fake(), &fx, &none, false);
    CHECK_EQ(api->flag_define(event.call(), gsf_str("f"), GSF_FLAG_BOOL, gsf_bytes("\xc3", 1), gsf_str("")), GSF_STATUS_UNAVAILABLE);
  }
  gsf::CallScope init(&Fake(), &fx, &none, true);
  gsf_type_call call = init.call();
  CHECK_EQ(api->flag_define(call, gsf_str("f"), 9, gsf_bytes("\xc3", 1), gsf_str("")), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->flag_define(call, gsf_str("f"), GSF_FLAG_INT32, gsf_bytes("\xce\xff\xff\xff\xff", 5), gsf_str("")), GSF_STATUS_INVALID_ARGUMENT);
  CHECK(init.state().error.find("flag_define of plugin 'results-fake' 'f': the default must be one msgpack int32 value in range") == 0);
  CHECK_EQ(api->flag_define(call, gsf_str("f"), GSF_FLAG_STRING, gsf_bytes("\x01", 1), gsf_str("")), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->flag_define(call, gsf_str("f"), GSF_FLAG_DOUBLE, gsf_bytes("\x01", 1), gsf_str("d")), GSF_STATUS_OK);
  CHECK_EQ(api->flag_define(call, gsf_str("f"), GSF_FLAG_DOUBLE, gsf_bytes("\x02", 1), gsf_str("d")), GSF_STATUS_CONFLICT);
  CHECK_EQ(api->counter_register_callable(call, gsf_str("c"), gsf_str("n"), gsf_str(""), nullptr, nullptr, nullptr), GSF_STATUS_INVALID_ARGUMENT);
  drops = 0;
  CHECK_EQ(api->counter_register_callable(call, gsf_str("c"), gsf_str("n"), gsf_str("d"), Counter, nullptr, Drop), GSF_STATUS_OK);
  CHECK_EQ(api->counter_monitor(call, gsf_str("c"), gsf_str("n"), std::nan("")), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->counter_monitor(call, gsf_str("c"), gsf_str("n"), 3), GSF_STATUS_OK);
  const gsf::NativeDeclarations* d = gsf::ProcessResultHost().FindDeclarations(&Fake());
  REQUIRE(d != nullptr);
  CHECK_EQ(d->flags.size(), 1u);
  CHECK_EQ(d->monitors.size(), 1u);
  REQUIRE(d->callables.size() == 1u);
  double v = 0;
  std::string error;
  CHECK_EQ(gsf::ProcessResultHost().ReadCallable(d->callables[0], &v, &error), 1);
  CHECK_EQ(v, 12.5);
  // The copy ends: its callable's user data is released once, and it answers no value.
  CHECK_EQ(gsf::ProcessResultHost().ReleaseCallables(&Fake()), 1u);
  CHECK_EQ(gsf::ProcessResultHost().ReleaseCallables(&Fake()), 0u);
  CHECK_EQ(drops, 1);
  CHECK_EQ(gsf::ProcessResultHost().ReadCallable(d->callables[0], &v, &error), 0);
}

}  // namespace plugin_results_test
