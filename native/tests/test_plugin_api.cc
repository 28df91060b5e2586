// ABI 1.1 services (api_probe fixture): what a plugin registers for the API service and the
// console, response writers (once only, kinds, the mailbox for answers outside their call,
// released requests), object requests and their continuations.
#include <dlfcn.h>

#include <string>
#include <vector>

#include "../core/json_msgpack.h"
#include "../core/plugin_api.h"
#include "check.h"
#include "plugin_helpers.h"

namespace plugin_api_test {

namespace {

struct ApiCollected : Collected {
  std::vector<std::string> answers;  // "rid|status|body or -|message"
  std::vector<std::string> objects;  // "op|continuation|type|name|<bytes size>|mode"
  uint64_t last_continuation = 0;

  void ApiAnswer(uint64_t rid, int32_t status, std::string_view body, bool has_body, std::string_view message) override {
    answers.push_back(std::to_string(rid) + "|" + std::to_string(status) + "|" + (has_body ? std::string(body) : "-") + "|" +
                      std::string(message));
  }
  void ObjectRequest(int op, uint64_t continuation, std::string_view type, std::string_view name, std::string_view bytes,
                     uint32_t mode) override {
    if (continuation) last_continuation = continuation;
    objects.push_back(std::to_string(op) + "|" + (continuation ? "c" : "-") + "|" + std::string(type) + "|" + std::string(name) + "|" +
                      std::to_string(bytes.size()) + "|" + std::to_string(mode));
  }
};

struct Probe {
  std::string path = FixturePath("api_probe");
  const gsf::NativePlugin* plugin = TryLoad(path);
  const gsf::ApiRegistrations* reg = plugin ? gsf::ProcessApiHost().Find(plugin) : nullptr;
  int* first = PluginGlobal<int>(path, "probe_first");
  int* second = PluginGlobal<int>(path, "probe_second");
  ApiCollected fx;

  bool ok() const { return plugin && reg && first && second && reg->routes.size() == 1; }
  gsf::CallResult Call(uint64_t rid, uint32_t kind, const std::string& operation, uint64_t event_id = 900) {
    gsf::EventContext ev = Event(event_id, (1ull << 40) + 77, GSF_EVENT_API, 0, "probe.route");
    return gsf::ProcessApiHost().Call(reg->routes[0].entry, ev, rid, kind, std::string("\x80", 1), operation + "\nGET\n/probe/1", &fx);
  }
};

template <typename F>
F Exported(const std::string& path, const char* name) {
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  void* sym = lib ? ::dlsym(lib, name) : nullptr;
  if (lib) ::dlclose(lib);
  return reinterpret_cast<F>(sym);
}

}  // namespace

TEST(api_registrations_are_kept_per_plugin) {
  Probe p;
  REQUIRE(p.ok());
  CHECK_EQ(p.reg->routes[0].method, std::string("GET"));
  CHECK_EQ(p.reg->routes[0].path, std::string("/probe/{x}"));
  CHECK_EQ(p.reg->routes[0].name, std::string("probe.route"));
  // The table's struct_size ends before update_user: places 1 and 3 are read, 4 is not.
  REQUIRE(p.reg->operations.size() == 2);
  CHECK_EQ(p.reg->operations[0].first, 1u);
  CHECK_EQ(p.reg->operations[1].first, 3u);
  CHECK(p.reg->editable_account.empty());
  CHECK(p.reg->editable_character == std::vector<std::string>{"score"});
  REQUIRE(p.reg->giftable.size() == 1);
  CHECK_EQ(p.reg->giftable[0].second, std::string("Gem"));
  CHECK(p.reg->notice_categories == std::vector<std::string>{"lobby"});
  CHECK(p.reg->mission_normal == std::vector<std::string>{"lobby"});
  CHECK(p.reg->mission_achievement.empty());
  REQUIRE(p.reg->campaigns.size() == 1);  // the refused "half" left nothing
  CHECK_EQ(p.reg->campaigns[0].type, std::string("sale"));
  CHECK(p.reg->campaigns[0].begin != p.reg->campaigns[0].end);
  REQUIRE(p.reg->queries.size() == 1);
  CHECK(!p.reg->queries[0].has_response);
  CHECK(p.reg->queries[0].request == std::vector<std::string>{"name"});
}

TEST(api_writer_answers_once_in_its_call) {
  Probe p;
  REQUIRE(p.ok());
  gsf::CallResult r = p.Call(501, GSF_ANSWER_ANY, "twice");
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(*p.first, GSF_STATUS_OK);
  CHECK_EQ(*p.second, GSF_STATUS_CONFLICT);
  REQUIRE(p.fx.answers.size() == 1);
  CHECK_EQ(p.fx.answers[0], std::string("501|0|{\"a\":1}|"));
  REQUIRE(p.fx.logs.size() == 1);  // the second answer is logged
  CHECK(p.fx.logs[0].find("a second answer was ignored") != std::string::npos);
  gsf::ProcessApiHost().Release(501);
}

TEST(api_writer_kinds_and_failures) {
  Probe p;
  REQUIRE(p.ok());
  p.Call(502, GSF_ANSWER_JSON_OBJECT, "kinds");
  CHECK_EQ(*p.first, GSF_STATUS_INVALID_ARGUMENT);  // a bool for an object writer
  CHECK_EQ(*p.second, GSF_STATUS_INVALID_ARGUMENT); // strings too
  CHECK(p.fx.answers.empty());
  p.Call(503, GSF_ANSWER_VOID, "error");
  CHECK_EQ(*p.first, GSF_STATUS_INVALID_ARGUMENT);  // OK is not a failure
  CHECK_EQ(*p.second, GSF_STATUS_OK);
  REQUIRE(p.fx.answers.size() == 1);
  CHECK_EQ(p.fx.answers[0], std::string("503|3|-|taken"));
  gsf::CallResult r = p.Call(504, GSF_ANSWER_ANY, "fail");
  CHECK_EQ(r.status, GSF_STATUS_NOT_FOUND);
  CHECK_EQ(r.error, std::string("nothing here"));
  for (uint64_t rid : {502, 503, 504}) gsf::ProcessApiHost().Release(rid);
}

TEST(api_writer_outside_its_call_goes_to_the_mailbox) {
  Probe p;
  REQUIRE(p.ok());
  static int notified = 0;
  gsf::ProcessApiHost().SetNotify([] { notified++; });
  p.Call(505, GSF_ANSWER_STRING, "keep");
  CHECK(p.fx.answers.empty());
  auto answer = Exported<int (*)()>(p.path, "probe_answer_kept");
  REQUIRE(answer != nullptr);
  CHECK_EQ(answer(), GSF_STATUS_OK);
  CHECK_EQ(notified, 1);
  std::vector<gsf::ApiAnswerRecord> got = gsf::ProcessApiHost().TakeAnswers();
  REQUIRE(got.size() == 1);
  CHECK_EQ(got[0].rid, uint64_t{505});
  CHECK_EQ(got[0].body, std::string("\"later\""));
  CHECK_EQ(answer(), GSF_STATUS_CONFLICT);  // answered already
  CHECK(gsf::ProcessApiHost().Answered(505));
  gsf::ProcessApiHost().Release(505);
  CHECK(!gsf::ProcessApiHost().Answered(505));
  CHECK_EQ(answer(), GSF_STATUS_CONFLICT);  // the request ended once answered: still a second answer
  CHECK(gsf::ProcessApiHost().TakeAnswers().empty());
  // A request that ended unanswered (504): its writer's answer has expired.
  p.Call(590, GSF_ANSWER_STRING, "keep");
  CHECK(!gsf::ProcessApiHost().Answered(590));
  gsf::ProcessApiHost().Release(590);
  CHECK_EQ(answer(), GSF_STATUS_EXPIRED);
  CHECK(gsf::ProcessApiHost().TakeAnswers().empty());
  // Event threads post their finished answers in batches: one wake-up until the main thread drains.
  std::vector<gsf::ApiAnswerRecord> batch(2);
  batch[0].rid = 600;
  batch[0].status = 204;
  batch[1].rid = 601;
  batch[1].status = 200;
  batch[1].has_body = true;
  batch[1].body = "[1]";
  for (auto& a : batch) a.http = true;
  std::vector<gsf::ApiAnswerRecord> more(1);
  more[0].rid = 602;
  gsf::ProcessApiHost().PostAnswers(std::move(batch));
  gsf::ProcessApiHost().PostAnswers(std::move(more));
  CHECK_EQ(notified, 2);
  got = gsf::ProcessApiHost().TakeAnswers();
  REQUIRE(got.size() == 3);
  CHECK_EQ(got[0].rid, uint64_t{600});
  CHECK(got[1].http && got[1].has_body && got[1].body == "[1]");
  CHECK_EQ(got[2].rid, uint64_t{602});
  gsf::ProcessApiHost().SetNotify(nullptr);
}

TEST(api_object_requests_continue_in_the_event) {
  Probe p;
  REQUIRE(p.ok());
  gsf::CallResult r = p.Call(506, GSF_ANSWER_JSON_OBJECT, "fetch", 906);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(*p.first, GSF_STATUS_OK);
  CHECK_EQ(*p.second, GSF_STATUS_OK);
  REQUIRE(p.fx.objects.size() == 2);
  CHECK_EQ(p.fx.objects[0], std::string("0|c|Thing|t1|0|1"));
  CHECK_EQ(p.fx.objects[1], std::string("2|-|Thing|t1|4|1"));
  CHECK(p.fx.answers.empty());
  // The fetch finished: its continuation runs in the same event and answers there.
  std::string fields, error;
  gsf::JsonToMsgpack("{\"n\":2}", &fields, &error);
  gsf::EventContext ev = Event(906, (1ull << 40) + 77, GSF_EVENT_API, 0, "probe.route");
  r = gsf::ProcessApiHost().Continue(p.fx.last_continuation, ev, true, "t1", fields, &p.fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(p.fx.answers.size() == 1);
  CHECK_EQ(p.fx.answers[0], std::string("506|0|{\"found\":true,\"id\":\"t1\",\"fields\":{\"n\":2}}|"));
  r = gsf::ProcessApiHost().Continue(p.fx.last_continuation, ev, true, "t1", fields, &p.fx);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);  // a continuation runs once
  gsf::ProcessApiHost().Release(506);
  auto outside = Exported<int (*)()>(p.path, "probe_fetch_outside");
  REQUIRE(outside != nullptr);
  CHECK_EQ(outside(), GSF_STATUS_UNAVAILABLE);  // objects belong to events
}

TEST(api_registration_only_during_init) {
  Probe p;
  REQUIRE(p.ok());
  p.Call(507, GSF_ANSWER_ANY, "late-register");
  CHECK_EQ(*p.first, GSF_STATUS_UNAVAILABLE);
  CHECK_EQ(*p.second, GSF_STATUS_OK);
  CHECK_EQ(p.reg->routes.size(), size_t{1});
  gsf::ProcessApiHost().Release(507);
}

}  // namespace plugin_api_test
