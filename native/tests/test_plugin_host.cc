// Loading native plugins: one broken fixture per failure, each refused with its one-line
// error before any of its code runs; failing handlers; exceptions at the boundary; a reply
// after the event timed out; the example plugins.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "../core/event_tags.h"
#include "check.h"
#include "plugin_helpers.h"

namespace plugin_host_test {

namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Loads `fixture`, which must fail with `reason`; returns the message.
std::string LoadFailure(const std::string& fixture, const std::string& reason) {
  std::string got_reason, message;
  const gsf::NativePlugin* p = TryLoad(FixturePath(fixture), &got_reason, &message);
  CHECK(p == nullptr);
  CHECK_EQ(got_reason, reason);
  CHECK(Contains(message, FixturePath(fixture)));
  CHECK(message.find('\n') == std::string::npos);  // one line
  return message;
}

}  // namespace

TEST(plugin_load_missing_file) {
  std::string reason, message;
  CHECK(TryLoad("/nonexistent/gsf/plugin.so", &reason, &message) == nullptr);
  CHECK_EQ(reason, std::string("missing"));
  CHECK_EQ(message, std::string("/nonexistent/gsf/plugin.so: no such file"));
}

TEST(plugin_load_not_a_shared_library) {
  std::string path = std::string(GSF_FIXTURE_DIR) + "/not_a_library.so";
  std::ofstream(path) << "just text\n";
  std::string reason, message;
  CHECK(TryLoad(path, &reason, &message) == nullptr);
  CHECK_EQ(reason, std::string("not_library"));
  CHECK(Contains(message, "not a shared library"));
  CHECK(TryLoad(GSF_FIXTURE_DIR, &reason, &message) == nullptr);  // a directory
  CHECK_EQ(reason, std::string("not_library"));
}

TEST(plugin_load_entry_missing) {
  CHECK(Contains(LoadFailure("entry_missing", "no_entry"), "no symbol gsf_plugin_entry_v1"));
}

TEST(plugin_load_abi_major_mismatch) {
  CHECK(Contains(LoadFailure("abi_major_field", "abi_major"), "built for plugin ABI 2.0, this gsf speaks ABI 1.2"));
  CHECK(Contains(LoadFailure("abi_major_symbol", "abi_major"), "exports gsf_plugin_entry_v2"));
}

TEST(plugin_load_abi_minor_newer) {
  CHECK(Contains(LoadFailure("abi_minor_newer", "abi_minor"), "built for plugin ABI 1.3, newer than this gsf's 1.2"));
}

TEST(plugin_load_struct_size_oversized) {
  std::string message = LoadFailure("struct_size_oversized", "struct_size");
  CHECK(Contains(message, "descriptor struct_size " + std::to_string(sizeof(gsf_type_plugin) + 16) +
                              " is larger than this gsf knows (" + std::to_string(sizeof(gsf_type_plugin)) + ")"));
}

TEST(plugin_load_init_failure_gives_the_plugins_message) {
  std::string message = LoadFailure("init_fails", "init_failed");
  CHECK(Contains(message, "init failed: UNAVAILABLE: the game database is unreachable"));
  // What it registered before failing does not stay.
  uint32_t id = gsf::ProcessRuntime().names.Find("init_fails.event");
  CHECK(id == 0 || !gsf::ProcessPluginHost().KnowsEvent(id));
  // Loads are once per process: the same file gives the same error again, without running init.
  CHECK_EQ(LoadFailure("init_fails", "init_failed"), message);
}

TEST(plugin_load_init_exception_is_stopped) {
  CHECK(Contains(LoadFailure("init_throws", "init_failed"), "init failed: INTERNAL: an exception escaped init: config file missing"));
}

TEST(plugin_load_duplicate_registration_names_both) {
  REQUIRE(TryLoad(FixturePath("duplicate_a")) != nullptr);
  std::string message = LoadFailure("duplicate_b", "duplicate");
  CHECK(Contains(message, "plugin 'duplicate-b' registers event 'dup.event', already registered by plugin 'duplicate-a'"));
  // The first one keeps its handler.
  const gsf::NativePlugin* a = TryLoad(FixturePath("duplicate_a"));
  REQUIRE(a != nullptr);
  CHECK(HandlerOf(*a, "dup.event") != UINT32_MAX);
}

TEST(plugin_load_twice_returns_the_same_plugin) {
  const gsf::NativePlugin* first = TryLoad(FixturePath("handler_fails"));
  const gsf::NativePlugin* second = TryLoad(FixturePath("handler_fails"));
  REQUIRE(first != nullptr);
  CHECK(first == second);
  CHECK_EQ(first->name, std::string("handler-fails"));
  CHECK_EQ(first->handlers.size(), size_t{3});
}

// A copy of a fixture at a new path, as a reload loads a rebuilt library.
static std::string CopyOf(const std::string& fixture, const std::string& as) {
  std::string path = std::string(GSF_FIXTURE_DIR) + "/" + as + ".so";
  std::ifstream in(FixturePath(fixture), std::ios::binary);
  std::ofstream(path, std::ios::binary) << in.rdbuf();
  return path;
}

TEST(plugin_reload_copy_takes_over_the_names_of_its_plugin) {
  const gsf::NativePlugin* first = TryLoad(FixturePath("handler_fails"));
  REQUIRE(first != nullptr);
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  std::string copy = CopyOf("handler_fails", "handler_fails_copy1");
  // Without `replaces` the copy is another plugin of a taken name.
  std::string reason, message;
  CHECK(TryLoad(copy, &reason, &message) == nullptr);
  CHECK_EQ(reason, std::string("name_taken"));
  // A copy loaded for another plugin's name is refused before its init runs.
  std::string other = CopyOf("handler_fails", "handler_fails_copy2");
  Collected scratch;
  try {
    host.Load(other, &scratch, "native-echo");
    CHECK(false);
  } catch (const gsf::PluginLoadError& e) {
    CHECK_EQ(std::string(e.reason()), std::string("bad_descriptor"));
    CHECK(Contains(e.what(), "the library is plugin 'handler-fails', not 'native-echo'"));
  }
  // With `replaces`, the copy registers the same events; both copies stay callable by index.
  std::string third = CopyOf("handler_fails", "handler_fails_copy3");
  const gsf::NativePlugin* fresh = &host.Load(third, &scratch, "handler-fails");
  CHECK(fresh != first);
  CHECK_EQ(fresh->handlers.size(), first->handlers.size());
  uint32_t old_index = HandlerOf(*first, "fails.with_message"), new_index = HandlerOf(*fresh, "fails.with_message");
  CHECK(old_index != new_index);
  Collected fx;
  CHECK_EQ(host.CallEvent(old_index, Event(1, 1ull << 40, 0, 0, "x"), "", &fx).status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(host.CallEvent(new_index, Event(2, 1ull << 40, 0, 0, "x"), "", &fx).status, GSF_STATUS_INVALID_ARGUMENT);
  // The same path again is the same copy.
  CHECK(&host.Load(third, &scratch, "handler-fails") == fresh);
}

TEST(plugin_handler_error_status_and_message) {
  const gsf::NativePlugin* p = TryLoad(FixturePath("handler_fails"));
  REQUIRE(p != nullptr);
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  Collected fx;
  gsf::CallResult r = host.CallEvent(HandlerOf(*p, "fails.with_message"), Event(1, 1ull << 40, 0, 0, "fails.with_message"), "", &fx);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(r.error, std::string("the score must be positive"));
  r = host.CallEvent(HandlerOf(*p, "fails.without_message"), Event(2, 1ull << 40, 0, 0, "x"), "", &fx);
  CHECK_EQ(r.status, GSF_STATUS_NOT_FOUND);
  CHECK_EQ(r.error, std::string());
  CHECK(!r.replied);
  // A message handler that replied before failing: the reply stays, the status says it failed,
  // and the result says it replied (gsf then logs the failure without answering it again).
  std::string frame = "{\"type\":\"fails.after_reply\",\"body\":[1],\"id\":3}";
  r = host.CallMessage(HandlerOf(*p, "fails.after_reply"), Event(3, 1ull << 41, 1, 1ull << 41, "fails.after_reply"), frame, &fx);
  CHECK_EQ(r.status, GSF_STATUS_CONFLICT);
  CHECK_EQ(r.error, std::string("failed after replying"));
  CHECK(r.replied);
  REQUIRE(fx.sends.size() == 1);
  CHECK_EQ(fx.sends[0].frame, std::string("{\"type\":\"fails.after_reply\",\"body\":[1],\"id\":3}"));
  // A handler index of the wrong kind is refused, not called.
  r = host.CallMessage(HandlerOf(*p, "fails.with_message"), Event(4, 1, 1, 2, "x"), frame, &fx);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  r = host.CallEvent(999999, Event(4, 1, 0, 0, "x"), "", &fx);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
}

TEST(plugin_cpp_exceptions_become_statuses) {
  const gsf::NativePlugin* p = TryLoad(FixturePath("cpp_exception"));
  REQUIRE(p != nullptr);
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  Collected fx;
  auto call = [&](const char* name, const std::string& payload = "") {
    return host.CallEvent(HandlerOf(*p, name), Event(10, 1ull << 40, 0, 0, name), payload, &fx);
  };
  gsf::CallResult r = call("cpp.throws");
  CHECK_EQ(r.status, GSF_STATUS_INTERNAL);
  CHECK_EQ(r.error, std::string("wrapped handler threw"));
  r = call("cpp.error");
  CHECK_EQ(r.status, GSF_STATUS_PERMISSION_DENIED);
  CHECK_EQ(r.error, std::string("not your castle"));
  r = call("cpp.bad_alloc");
  CHECK_EQ(r.status, GSF_STATUS_RESOURCE_EXHAUSTED);
  r = call("cpp.raw_throw");
  CHECK_EQ(r.status, GSF_STATUS_INTERNAL);
  CHECK_EQ(r.error, std::string("an exception crossed the plugin boundary: raw hook threw"));
  CHECK_EQ(call("cpp.ok").status, GSF_STATUS_OK);
  CHECK_EQ(call("cpp.ok", std::string("\xc0", 1)).status, GSF_STATUS_CONFLICT);
}

TEST(plugin_reply_after_timeout_is_refused) {
  std::string path = FixturePath("late_reply");
  const gsf::NativePlugin* late = TryLoad(path);
  const gsf::NativePlugin* echo = TryLoad(FixturePath("native-echo"));
  REQUIRE(late != nullptr && echo != nullptr);
  int* started = PluginGlobal<int>(path, "late_reply_started");
  int* release = PluginGlobal<int>(path, "late_reply_release");
  int* reply_status = PluginGlobal<int>(path, "late_reply_status");
  int* invoke_status = PluginGlobal<int>(path, "late_invoke_status");
  REQUIRE(started && release && reply_status && invoke_status);
  DrainQueue();
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  const uint64_t kEvent = 777001;
  Collected late_fx;
  gsf::CallResult late_result;
  std::thread worker([&] {
    std::string frame = "{\"type\":\"late.reply\",\"body\":1,\"id\":5}";
    late_result = host.CallMessage(HandlerOf(*late, "late.reply"), Event(kEvent, 1ull << 42, 1, 1ull << 42, "late.reply"),
                                   frame, &late_fx);
  });
  while (!__atomic_load_n(started, __ATOMIC_SEQ_CST)) std::this_thread::yield();
  // The watchdog's part: the event timed out.
  CHECK(host.Revoke(kEvent));
  CHECK(!host.Revoke(kEvent + 1));
  // Other work in flight is untouched: another session's message runs meanwhile.
  Collected echo_fx;
  std::string frame = "{\"type\":\"native.echo\",\"body\":\"hi\"}";
  gsf::CallResult echo_result = host.CallMessage(HandlerOf(*echo, "native.echo"),
                                                 Event(kEvent + 1, 1ull << 43, 1, 1ull << 43, "native.echo"), frame, &echo_fx);
  __atomic_store_n(release, 1, __ATOMIC_SEQ_CST);
  worker.join();
  CHECK_EQ(late_result.status, GSF_STATUS_EXPIRED);
  CHECK(late_result.expired);
  CHECK_EQ(*reply_status, static_cast<int>(GSF_STATUS_EXPIRED));
  CHECK_EQ(*invoke_status, static_cast<int>(GSF_STATUS_EXPIRED));
  CHECK(late_fx.sends.empty());
  CHECK_EQ(late_fx.logs.size(), size_t{1});  // logged before the timeout (the caller drops it with the rest)
  CHECK_EQ(echo_result.status, GSF_STATUS_OK);
  REQUIRE(echo_fx.sends.size() == 1);
  CHECK_EQ(echo_fx.sends[0].frame, std::string("{\"type\":\"native.echo\",\"body\":\"hi\"}"));
  std::vector<QueuedEvent> queued = DrainQueue();
  REQUIRE(queued.size() == 1);  // the echo's child only: the late handler's invoke was refused
  CHECK_EQ(queued[0].name, std::string("native.echo_#1"));
}

}  // namespace plugin_host_test
