// ABI 1.2: targeting an older minor (a plugin built with this header for 1.0 loads on a 1.0 host,
// one for 1.2 is refused by a 1.1 host), the descriptor's lifecycle hooks, timeout handlers, and
// user data released exactly once through destructors: continuations that ran, failed, were
// dropped or whose event timed out, and timer_start timers cancelled or ended with their copy.
// The probe (test/fixtures/native-plugins/native-lifecycle) counts boxes made and dropped.
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "../core/plugin_api.h"
#include "../core/plugin_lifecycle.h"
#include "check.h"
#include "plugin_helpers.h"

namespace plugin_lifecycle_test {

namespace {

// A collector that also keeps the continuations of object requests.
struct Requests : Collected {
  std::vector<uint64_t> continuations;
  void ObjectRequest(int, uint64_t continuation, std::string_view, std::string_view, std::string_view, uint32_t) override {
    continuations.push_back(continuation);
  }
};

double Count(const char* name) {
  double v = 0;
  gsf::ProcessRuntime().counters.Value("lifecycle", name, &v);
  return v;
}

// msgpack of a short string.
std::string Mode(const std::string& s) { return std::string(1, static_cast<char>(0xa0 | s.size())) + s; }

const gsf::NativePlugin* Probe() {
  std::string reason, message;
  const gsf::NativePlugin* p = TryLoad(FixturePath("native_lifecycle"), &reason, &message);
  if (!p) std::fprintf(stderr, "native_lifecycle: %s %s\n", reason.c_str(), message.c_str());
  return p;
}

}  // namespace

TEST(plugin_target_minor_0_loads_on_a_1_0_host) {
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  host.SetHostMinorForTesting(0);
  const gsf::NativePlugin* p = TryLoad(FixturePath("target_minor_0"));
  host.SetHostMinorForTesting(GSF_PLUGIN_ABI_MINOR);
  REQUIRE(p != nullptr);
  CHECK_EQ(p->descriptor->abi_minor, uint16_t{0});
  CHECK_EQ(p->descriptor->struct_size, GSF_PLUGIN_DESCRIPTOR_SIZE_1_0);
  CHECK(p->on_start == nullptr && p->on_stop == nullptr && p->on_unload == nullptr);  // nothing read past struct_size
  Collected fx;
  CHECK_EQ(host.CallEvent(HandlerOf(*p, "target0.ping"), Event(1, 1ull << 40, 0, 0, "target0.ping"), "", &fx).status, GSF_STATUS_OK);
  double pings = 0;
  CHECK(gsf::ProcessRuntime().counters.Value("target_minor_0", "pings", &pings));
  CHECK_EQ(pings, 1.0);
}

TEST(plugin_target_minor_2_is_refused_by_a_1_1_host) {
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  // A copy at its own path: the probe's own path is loaded by other tests.
  std::string copy = std::string(GSF_FIXTURE_DIR) + "/native_lifecycle_for_1_1.so";
  {
    std::ifstream in(FixturePath("native_lifecycle"), std::ios::binary);
    std::ofstream(copy, std::ios::binary) << in.rdbuf();
  }
  host.SetHostMinorForTesting(1);
  std::string reason, message;
  const gsf::NativePlugin* p = TryLoad(copy, &reason, &message);
  host.SetHostMinorForTesting(GSF_PLUGIN_ABI_MINOR);
  CHECK(p == nullptr);
  CHECK_EQ(reason, std::string("abi_minor"));
  CHECK(message.find("built for plugin ABI 1.2, newer than this gsf's 1.1 (update gsf or build against its header)") !=
        std::string::npos);
  CHECK_EQ(Count("made"), 0.0);  // refused before its init ran
}

TEST(plugin_lifecycle_hooks_are_read_from_the_descriptor) {
  const gsf::NativePlugin* p = Probe();
  REQUIRE(p != nullptr);
  CHECK(p->on_start != nullptr && p->on_stop != nullptr && p->on_unload != nullptr);
  CHECK_EQ(p->timeout_handlers.size(), size_t{1});
  CHECK_EQ(p->descriptor->struct_size, static_cast<uint32_t>(sizeof(gsf_type_plugin)));
  Collected fx;
  gsf::HookResult start = gsf::RunStartHook(p, &fx);
  CHECK(start.ran);
  CHECK_EQ(start.status, GSF_STATUS_OK);
  CHECK_EQ(Count("started"), 1.0);
  REQUIRE(fx.logs.size() == 1);
  CHECK_EQ(fx.logs[0], std::string("0|native-lifecycle: on_start ran"));
  gsf::HookResult stop = gsf::RunStopHook(p, static_cast<int64_t>(std::time(nullptr)) * 1000 + 5000, &fx);
  CHECK_EQ(stop.status, GSF_STATUS_OK);
  CHECK_EQ(Count("stopped"), 1.0);
  CHECK_EQ(Count("stop_deadline_ok"), 1.0);
  gsf::RunTimeoutHandlers(p, "lifecycle.fetch", 77, 1ull << 40, 0, &fx);
  CHECK_EQ(Count("timeouts"), 1.0);
  CHECK_EQ(Count("timeout_event_id"), 77.0);
  CHECK_EQ(Count("timeout_names"), 1.0);
}

TEST(plugin_on_stop_past_its_deadline_has_an_expired_call) {
  const gsf::NativePlugin* p = Probe();
  REQUIRE(p != nullptr);
  double stopped = Count("stopped");
  Collected fx;
  // gsf stopped waiting for it (the deadline has passed): its log line is not one of the hook's
  // effects but goes to the fallback, as every call of an expired call does.
  gsf::HookResult stop = gsf::RunStopHook(p, gsf::NowMs() - 1, &fx);
  CHECK_EQ(stop.status, GSF_STATUS_OK);
  CHECK_EQ(Count("stopped"), stopped + 1);
  CHECK(fx.logs.empty());
  // Within its deadline the same line is the hook's.
  gsf::HookResult again = gsf::RunStopHook(p, gsf::NowMs() + 5000, &fx);
  CHECK_EQ(again.status, GSF_STATUS_OK);
  REQUIRE(fx.logs.size() == 1);
  CHECK_EQ(fx.logs[0], std::string("0|native-lifecycle: on_stop ran"));
}

TEST(plugin_continuation_user_data_is_released_exactly_once) {
  const gsf::NativePlugin* p = Probe();
  REQUIRE(p != nullptr);
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  gsf::ApiHost& api = gsf::ProcessApiHost();
  uint32_t fetch = HandlerOf(*p, "lifecycle.fetch");
  double made = Count("made"), dropped = Count("dropped");
  auto ask = [&](uint64_t event_id, const std::string& mode, Requests* fx) {
    return host.CallEvent(fetch, Event(event_id, 1ull << 40, 0, 0, "lifecycle.fetch"), Mode(mode), fx);
  };
  // Ran: released after the continuation returned.
  Requests ok;
  CHECK_EQ(ask(501, "ok", &ok).status, GSF_STATUS_OK);
  REQUIRE(ok.continuations.size() == 1);
  CHECK_EQ(Count("made"), made + 1);
  CHECK_EQ(Count("dropped"), dropped);
  Collected out;
  CHECK_EQ(api.Continue(ok.continuations[0], Event(501, 1ull << 40, 0, 0, "lifecycle.fetch"), false, "", "", &out).status, GSF_STATUS_OK);
  CHECK_EQ(Count("dropped"), dropped + 1);
  // Failed: released all the same, and a second Continue or drop of it finds nothing.
  Requests fail;
  ask(502, "fail", &fail);
  REQUIRE(fail.continuations.size() == 1);
  gsf::CallResult r = api.Continue(fail.continuations[0], Event(502, 1ull << 40, 0, 0, "lifecycle.fetch"), false, "", "", &out);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(r.error, std::string("the probe's continuation fails on purpose"));
  CHECK_EQ(Count("dropped"), dropped + 2);
  api.DropContinuation(fail.continuations[0]);
  CHECK_EQ(api.Continue(fail.continuations[0], Event(502, 1ull << 40, 0, 0, "x"), false, "", "", &out).status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(Count("dropped"), dropped + 2);
  // Dropped without running (the handler failed after asking).
  Requests failed_first;
  CHECK_EQ(ask(503, "handler-fails", &failed_first).status, GSF_STATUS_INVALID_ARGUMENT);
  REQUIRE(failed_first.continuations.size() == 1);
  api.DropContinuation(failed_first.continuations[0]);
  CHECK_EQ(Count("dropped"), dropped + 3);
  // Timed out: revoking the event releases what it still held; only its own.
  Requests a, b;
  ask(504, "ok", &a);
  ask(505, "ok", &b);
  CHECK(!host.Revoke(504));  // no call of it was running
  CHECK_EQ(Count("dropped"), dropped + 4);
  CHECK_EQ(api.Continue(a.continuations[0], Event(504, 1ull << 40, 0, 0, "x"), false, "", "", &out).status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(Count("continued"), 2.0);  // ok and fail ran; the timed-out one never did
  // Ended with its copy (reload or shutdown).
  CHECK_EQ(gsf::EndCopyHoldings(p), size_t{1});
  CHECK_EQ(Count("dropped"), dropped + 5);
  CHECK_EQ(Count("made"), made + 5);
  CHECK_EQ(gsf::EndCopyHoldings(p), size_t{0});
}

TEST(plugin_timer_user_data_is_released_exactly_once) {
  const gsf::NativePlugin* p = Probe();
  REQUIRE(p != nullptr);
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  gsf::NativeTimers& timers = gsf::ProcessNativeTimers();
  double made = Count("made"), dropped = Count("dropped");
  size_t before = timers.Count();
  Collected fx;
  CHECK_EQ(host.CallEvent(HandlerOf(*p, "lifecycle.timers"), Event(601, 1ull << 40, 0, 0, "lifecycle.timers"), "", &fx).status,
           GSF_STATUS_OK);
  CHECK_EQ(Count("made"), made + 4);
  CHECK_EQ(timers.Count(), before + 4);
  // timer_start needs a call: its plugin owns the timer.
  CHECK_EQ(host.Api()->timer_start(gsf_no_call(), 1, 0, gsf_str(""), nullptr, nullptr, nullptr, nullptr), GSF_STATUS_UNAVAILABLE);
  // A reload or shutdown ends them all, running or not, each released once.
  CHECK_EQ(gsf::EndCopyHoldings(p), size_t{4});
  CHECK_EQ(Count("dropped"), dropped + 4);
  CHECK_EQ(timers.Count(), before);
  CHECK(!timers.Cancel(123456789));
  CHECK_EQ(Count("dropped"), dropped + 4);
}

// A collector that holds what an event starts, as the binding's does (the event may be dropped).
struct Holding : Collected {
  std::vector<gsf::HeldTimerStart> timers;
  std::vector<std::string> payloads;
  void Timer(const gsf::HeldTimerStart& t) override {
    payloads.emplace_back(t.payload);
    timers.push_back(t);
  }
};

TEST(plugin_timer_start_in_an_event_is_held_until_its_effects_are_made_or_dropped) {
  const gsf::NativePlugin* p = Probe();
  REQUIRE(p != nullptr);
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  gsf::NativeTimers& timers = gsf::ProcessNativeTimers();
  double made = Count("made"), dropped = Count("dropped");
  size_t before = timers.Count();
  Holding fx;
  CHECK_EQ(host.CallEvent(HandlerOf(*p, "lifecycle.timers"), Event(602, 1ull << 40, 0, 0, "lifecycle.timers"), "", &fx).status,
           GSF_STATUS_OK);
  REQUIRE(fx.timers.size() == 4);
  CHECK_EQ(Count("made"), made + 4);
  CHECK_EQ(timers.Count(), before + 4);  // recorded, with ids reserved, not started
  // The event was dropped (a rerun, a failure): two never start, and their user data is released once.
  gsf::DropHeldTimer(fx.timers[0].id);
  gsf::DropHeldTimer(fx.timers[1].id);
  CHECK_EQ(Count("dropped"), dropped + 2);
  CHECK_EQ(timers.Count(), before + 2);
  gsf::DropHeldTimer(fx.timers[0].id);  // once only
  CHECK_EQ(Count("dropped"), dropped + 2);
  // The others are made: started with their reserved ids, and cancellable by them.
  for (size_t k = 2; k < 4; ++k) {
    fx.timers[k].payload = fx.payloads[k];
    gsf::ApplyHeldTimer(fx.timers[k]);
  }
  CHECK(timers.Cancel(fx.timers[3].id));
  CHECK_EQ(Count("dropped"), dropped + 3);
  CHECK_EQ(gsf::EndCopyHoldings(p), size_t{1});
  CHECK_EQ(Count("dropped"), dropped + 4);
  CHECK_EQ(timers.Count(), before);
}

TEST(plugin_retiring_a_copy_releases_its_handlers_and_calls_on_unload) {
  const gsf::NativePlugin* p = Probe();
  REQUIRE(p != nullptr);
  double dropped = Count("dropped");
  Collected fx;
  CHECK(gsf::RetireCopy(p, &fx));
  CHECK_EQ(Count("unloaded"), 1.0);
  CHECK_EQ(Count("dropped"), dropped + 1);  // the timeout handler's user data
  CHECK(p->timeout_handlers.empty());
  CHECK(!gsf::RetireCopy(p, &fx));  // once
  CHECK_EQ(Count("unloaded"), 1.0);
  CHECK_EQ(Count("made"), Count("dropped"));  // every box made was released
}

TEST(plugin_a_throwing_destructor_or_on_unload_is_stopped_with_a_line) {
  const std::string path = FixturePath("drop_throws");
  const gsf::NativePlugin* p = TryLoad(path);
  REQUIRE(p != nullptr);
  uint64_t* timer = PluginGlobal<uint64_t>(path, "drop_throws_timer");
  REQUIRE(timer != nullptr && *timer != 0);
  // Lines outside a call go to the log target: a pipe here.
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  gsf::SetLogTarget(fds[1], false, 0, false);
  CHECK(gsf::ProcessNativeTimers().Cancel(*timer));  // its destructor throws
  gsf::SetLogTarget(2, false, 0, false);
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  CHECK(out.find("native] native plugin destructor (gsf_on_drop) threw; the exception was stopped: the destructor threw\n") !=
        std::string::npos);
  Collected fx;
  CHECK(gsf::RetireCopy(p, &fx));  // on_unload throws
  CHECK_EQ(fx.logs, std::vector<std::string>{"2|drop-throws: on_unload failed: an exception crossed the plugin boundary: on_unload threw"});
}

TEST(plugin_output_pointers_are_checked) {
  // Outputs the doc does not allow NULL for are refused, never written through.
  const gsf_type_host_api* api = gsf::ProcessPluginHost().Api();
  CHECK_EQ(api->flag_get(gsf_str("v"), nullptr), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(api->flag_get(gsf_str(""), nullptr), GSF_STATUS_INVALID_ARGUMENT);
  gsf_type_host_bytes value = {reinterpret_cast<uint8_t*>(1), 7};
  CHECK_EQ(api->flag_get(gsf_str("no_such_flag_anywhere"), &value), GSF_STATUS_NOT_FOUND);
  CHECK(value.ptr == nullptr && value.len == 0);  // cleared, never left dangling
  gsf::ProcessRuntime().counters.Update("outputs", "c", 3, false);
  CHECK_EQ(api->counter_read(gsf_str("outputs"), gsf_str("c"), nullptr), GSF_STATUS_INVALID_ARGUMENT);
  double v = 0;
  CHECK_EQ(api->counter_read(gsf_str("outputs"), gsf_str("c"), &v), GSF_STATUS_OK);
  CHECK_EQ(v, 3.0);
  // Outputs documented as "may be NULL" are optional.
  CHECK_EQ(api->counter_increase(gsf_str("outputs"), gsf_str("c"), 1, nullptr), GSF_STATUS_OK);
  // '.' and '..' are no URL path segment: REST could not read such a counter.
  for (const char* dots : {".", ".."}) {
    CHECK_EQ(api->counter_increase(gsf_str(dots), gsf_str("c"), 1, nullptr), GSF_STATUS_INVALID_ARGUMENT);
    CHECK_EQ(api->counter_update(gsf_str("outputs"), gsf_str(dots), 1, 0), GSF_STATUS_INVALID_ARGUMENT);
    CHECK_EQ(api->counter_define(gsf_str(dots), gsf_str("d"), gsf_str(""), 0, 0), GSF_STATUS_INVALID_ARGUMENT);
  }
  CHECK_EQ(api->counter_update(gsf_str("a/."), gsf_str("..b"), 1, 0), GSF_STATUS_OK);
  CHECK_EQ(api->invoke(gsf_no_call(), gsf_str("no.such.event"), gsf_bytes(nullptr, 0), nullptr, nullptr), GSF_STATUS_NOT_FOUND);
}

}  // namespace plugin_lifecycle_test
