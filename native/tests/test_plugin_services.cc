// Host services as plugins see them (services_probe fixture), and the two example plugins.
#include <string>
#include <vector>

#include "../core/event_tags.h"
#include "../core/json_msgpack.h"
#include "check.h"
#include "plugin_helpers.h"

namespace plugin_services_test {

namespace {

std::string Mp(const std::string& json) {
  std::string out, error;
  gsf::JsonToMsgpack(json, &out, &error);
  return out;
}

std::string Json(const std::string& msgpack) {
  std::string out, error;
  if (!gsf::MsgpackToJson(msgpack, &out, &error)) return "error: " + error;
  return out;
}

struct Probe {
  const gsf::NativePlugin* plugin = TryLoad(FixturePath("services_probe"));
  std::string path = FixturePath("services_probe");
  int* status = PluginGlobal<int>(path, "probe_status");
  uint64_t* value = PluginGlobal<uint64_t>(path, "probe_value");
  uint8_t* bytes = PluginGlobal<uint8_t>(path, "probe_bytes");
  size_t* len = PluginGlobal<size_t>(path, "probe_len");
  Collected fx;

  bool ok() const { return plugin && status && value && bytes && len; }
  /** Runs probe.run with [command, args...] (JSON) as an event of `ev`; returns the service's status. */
  int Run(const std::string& command_json, const gsf::EventContext& ev) {
    gsf::CallResult r = gsf::ProcessPluginHost().CallEvent(HandlerOf(*plugin, "probe.run"), ev, Mp(command_json), &fx);
    return r.status == GSF_STATUS_OK ? *status : 1000 + r.status;
  }
};

const uint64_t kSessionTag = (1ull << 40) + 2;  // an even session id: a json session

}  // namespace

TEST(services_invoke_follows_spec_tag_rules) {
  Probe p;
  REQUIRE(p.ok());
  DrainQueue();
  gsf::ProcessRuntime().config.Set("{}");
  gsf::EventContext net = Event(50, kSessionTag, GSF_EVENT_NETWORK, kSessionTag, "probe.parent");
  CHECK_EQ(p.Run("[\"invoke\",\"probe.target\"]", net), 0);
  CHECK_EQ(p.Run("[\"invoke\",\"probe.target\"]", net), 0);
  CHECK_EQ(p.Run("[\"invoke_named_tag\",\"probe.target\"]", net), 0);
  CHECK_EQ(p.Run("[\"invoke_tag\",\"probe.target\",123]", net), 0);
  CHECK_EQ(p.Run("[\"invoke_random\",\"probe.target\"]", net), 0);
  CHECK_EQ(p.Run("[\"invoke_named\",\"probe.target\"]", net), 0);
  CHECK_EQ(p.Run("[\"invoke_outside\",\"probe.target\"]", net), 0);
  gsf::EventContext timer = Event(51, GSF_TAG_TIMER, GSF_EVENT_TIMER, 0, "probe.tick");
  CHECK_EQ(p.Run("[\"invoke\",\"probe.target\"]", timer), 0);
  std::vector<QueuedEvent> q = DrainQueue();
  REQUIRE(q.size() == 8);
  // Inside a network event: the session's tag, the session, {parent}_#{n}, a user event.
  CHECK_EQ(q[0].tag, kSessionTag);
  CHECK_EQ(q[0].name, std::string("probe.parent_#1"));
  CHECK_EQ(q[0].handler, std::string("probe.target"));
  CHECK_EQ(q[0].session, kSessionTag);
  CHECK_EQ(q[0].kind, 0);
  CHECK_EQ(q[1].name, std::string("probe.parent_#1"));  // a new event: its own child count
  CHECK_EQ(q[2].tag, gsf::NamedTag("room:1"));
  CHECK_EQ(q[3].tag, uint64_t{123});
  CHECK(q[4].tag >= gsf::kTagBase && q[4].tag != kSessionTag);
  CHECK_EQ(q[5].name, std::string("custom.name"));
  CHECK_EQ(Json(q[5].payload), std::string("[1,2,3]"));
  // Outside any event: a random tag, the event's own name, no session.
  CHECK(q[6].tag >= gsf::kTagBase && q[6].tag != kSessionTag);
  CHECK_EQ(q[6].name, std::string("probe.target"));
  CHECK_EQ(q[6].session, uint64_t{0});
  // Under a timer handler: a random tag, not the timer tag.
  CHECK(q[7].tag >= gsf::kTagBase);
  CHECK_EQ(q[7].name, std::string("probe.tick_#1"));
}

TEST(services_invoke_counts_every_child_it_creates) {
  Probe p;
  REQUIRE(p.ok());
  DrainQueue();
  gsf::ProcessRuntime().config.Set("{}");
  gsf::EventContext net = Event(60, kSessionTag, GSF_EVENT_NETWORK, kSessionTag, "probe.parent");
  CHECK_EQ(p.Run("[\"invoke_named_then_default\",\"probe.target\"]", net), 0);
  std::vector<QueuedEvent> q = DrainQueue();
  REQUIRE(q.size() == 2);
  // The refused invoke created nothing; the named child is the first, the unnamed one the second.
  CHECK_EQ(q[0].name, std::string("custom.name"));
  CHECK_EQ(q[1].name, std::string("probe.parent_#2"));
}

TEST(services_invoke_bounds_event_names) {
  Probe p;
  REQUIRE(p.ok());
  DrainQueue();
  gsf::ProcessRuntime().config.Set("{}");
  // A parent whose name is near the limit: its children keep its name instead of growing it.
  std::string deep = "probe.parent" + std::string(gsf::kMaxEventNameBytes - 13, 'x');
  gsf::EventContext net = Event(70, kSessionTag, GSF_EVENT_NETWORK, kSessionTag, deep);
  CHECK_EQ(p.Run("[\"invoke\",\"probe.target\"]", net), 0);
  std::vector<QueuedEvent> q = DrainQueue();
  REQUIRE(q.size() == 1);
  CHECK_EQ(q[0].name, deep);
  // An explicit name: at most kMaxEventNameBytes.
  std::string at_limit = "[\"invoke_long_name\",\"probe.target\"," + std::to_string(gsf::kMaxEventNameBytes) + "]";
  std::string over = "[\"invoke_long_name\",\"probe.target\"," + std::to_string(gsf::kMaxEventNameBytes + 1) + "]";
  CHECK_EQ(p.Run(at_limit, net), 0);
  CHECK_EQ(p.Run(over, net), GSF_STATUS_INVALID_ARGUMENT);
  q = DrainQueue();
  REQUIRE(q.size() == 1);
  CHECK_EQ(q[0].name, std::string(gsf::kMaxEventNameBytes, 'n'));
}

TEST(services_invoke_switches_and_refusals) {
  Probe p;
  REQUIRE(p.ok());
  DrainQueue();
  gsf::EventContext net = Event(60, kSessionTag, GSF_EVENT_NETWORK, kSessionTag, "probe.parent");
  gsf::ProcessRuntime().config.Set("{\"enable_inheriting_event_tag\":false,\"enable_random_event_tag\":true}");
  CHECK_EQ(p.Run("[\"invoke\",\"probe.target\"]", net), 0);
  gsf::ProcessRuntime().config.Set("{\"enable_inheriting_event_tag\":false,\"enable_random_event_tag\":false}");
  CHECK_EQ(p.Run("[\"invoke\",\"probe.target\"]", net), 0);
  gsf::ProcessRuntime().config.Set("{}");
  CHECK_EQ(p.Run("[\"invoke\",\"no.such.event\"]", net), GSF_STATUS_NOT_FOUND);
  CHECK_EQ(p.Run("[\"invoke_bad_payload\",\"probe.target\"]", net), GSF_STATUS_INVALID_ARGUMENT);
  // A managed event becomes a target once declared.
  CHECK_EQ(p.Run("[\"invoke\",\"managed.only\"]", net), GSF_STATUS_NOT_FOUND);
  gsf::ProcessPluginHost().DeclareEvent("managed.only");
  CHECK_EQ(p.Run("[\"invoke\",\"managed.only\"]", net), 0);
  std::vector<QueuedEvent> q = DrainQueue();
  REQUIRE(q.size() == 3);
  CHECK(q[0].tag >= gsf::kTagBase && q[0].tag != kSessionTag);
  CHECK_EQ(q[1].tag, uint64_t{0});  // the null tag
  CHECK_EQ(q[2].handler, std::string("managed.only"));
}

TEST(services_timers_flags_and_registration) {
  Probe p;
  REQUIRE(p.ok());
  gsf::Runtime& rt = gsf::ProcessRuntime();
  gsf::EventContext ev = Event(70, 1ull << 40, GSF_EVENT_USER, 0, "probe.parent");
  size_t timers = rt.timers.Count();
  CHECK_EQ(p.Run("[\"timer_after\",\"probe.target\",60000]", ev), 0);
  uint64_t timer = *p.value;
  CHECK_EQ(rt.timers.Count(), timers + 1);
  CHECK(rt.timers.Cancel(timer));
  CHECK_EQ(p.Run("[\"timer_every\",\"probe.target\",0]", ev), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(p.Run("[\"timer_after\",\"no.such.event\",5]", ev), GSF_STATUS_NOT_FOUND);
  rt.config.Set("{\"v\":2,\"client_current_version\":\"1.2.3\"}");
  CHECK_EQ(p.Run("[\"flag\",\"client_current_version\"]", ev), 0);
  CHECK_EQ(Json(std::string(reinterpret_cast<char*>(p.bytes), *p.len)), std::string("\"1.2.3\""));
  CHECK_EQ(p.Run("[\"flag\",\"v\"]", ev), 0);
  CHECK_EQ(Json(std::string(reinterpret_cast<char*>(p.bytes), *p.len)), std::string("2"));
  CHECK_EQ(p.Run("[\"flag\",\"nope\"]", ev), GSF_STATUS_NOT_FOUND);
  rt.config.Set("{}");
  CHECK_EQ(p.Run("[\"register\"]", ev), GSF_STATUS_UNAVAILABLE);  // only init registers
}

TEST(services_sessions_and_logs) {
  Probe p;
  REQUIRE(p.ok());
  gsf::EventContext ev = Event(80, 1ull << 40, GSF_EVENT_USER, 0, "probe.parent");
  CHECK_EQ(p.Run("[\"reply\",\"\"]", ev), GSF_STATUS_UNAVAILABLE);  // an event, not a message
  CHECK_EQ(p.Run("[\"send\",\"push\",9007199254740991]", ev), 0);     // odd: a msgpack session
  CHECK_EQ(p.Run("[\"send\",\"push\",0]", ev), GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(p.Run("[\"publish\",\"lobby\"]", ev), 0);
  CHECK_EQ(p.Run("[\"log\",\"careful\",1]", ev), 0);
  REQUIRE(p.fx.sends.size() == 1);
  CHECK(p.fx.sends[0].binary);
  CHECK_EQ(p.fx.sends[0].session, uint64_t{9007199254740991});
  CHECK_EQ(Json(p.fx.sends[0].frame), std::string("{\"type\":\"push\",\"body\":[7]}"));
  REQUIRE(p.fx.publishes.size() == 1);
  CHECK_EQ(p.fx.publishes[0], std::string("lobby|{\"type\":\"news\",\"body\":\"hi\"}|") +
                                  std::to_string(Mp("{\"type\":\"news\",\"body\":\"hi\"}").size()));
  REQUIRE(p.fx.logs.size() == 1);
  CHECK_EQ(p.fx.logs[0], std::string("1|services-probe: careful"));
  // A call kept after its event ended is refused, never used.
  CHECK_EQ(p.Run("[\"save_call\"]", ev), 0);
  CHECK_EQ(p.Run("[\"use_saved_call\"]", ev), GSF_STATUS_EXPIRED);
  // A failing status carries the plugin's message.
  gsf::CallResult r = gsf::ProcessPluginHost().CallEvent(HandlerOf(*p.plugin, "probe.run"), ev,
                                                          Mp("[\"fail\",\"out of gold\",3]"), &p.fx);
  CHECK_EQ(r.status, GSF_STATUS_CONFLICT);
  CHECK_EQ(r.error, std::string("out of gold"));
}

TEST(services_reply_to_a_message) {
  Probe p;
  REQUIRE(p.ok());
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  std::string json = "{\"type\":\"probe.msg\",\"body\":[\"reply\",\"other.type\"],\"id\":9}";
  gsf::CallResult r = host.CallMessage(HandlerOf(*p.plugin, "probe.msg"), Event(90, kSessionTag, 1, kSessionTag, "probe.msg"),
                                       json, &p.fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(*p.status, 0);
  std::string msgpack = Mp("{\"type\":\"probe.msg\",\"body\":[\"reply\",\"\"]}");
  r = host.CallMessage(HandlerOf(*p.plugin, "probe.msg"), Event(91, kSessionTag + 1, 1, kSessionTag + 1, "probe.msg"), msgpack,
                       &p.fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(p.fx.sends.size() == 2);
  CHECK_EQ(p.fx.sends[0].frame, std::string("{\"type\":\"other.type\",\"body\":{\"ok\":true},\"id\":9}"));
  CHECK(!p.fx.sends[0].binary);
  CHECK(p.fx.sends[1].binary);
  CHECK_EQ(Json(p.fx.sends[1].frame), std::string("{\"type\":\"probe.msg\",\"body\":{\"ok\":true}}"));
  // A frame that does not decode never reaches the handler.
  r = host.CallMessage(HandlerOf(*p.plugin, "probe.msg"), Event(92, kSessionTag, 1, kSessionTag, "probe.msg"),
                       "{\"type\":\"probe.msg\",\"body\":", &p.fx);
  CHECK(r.decode_failed);
  CHECK_EQ(p.fx.sends.size(), size_t{2});
}

TEST(example_native_echo) {
  const gsf::NativePlugin* p = TryLoad(FixturePath("native-echo"));
  REQUIRE(p != nullptr);
  CHECK_EQ(p->name, std::string("native-echo"));
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  gsf::Runtime& rt = gsf::ProcessRuntime();
  DrainQueue();
  double before = 0;
  rt.counters.Value("native_example", "echoes", &before);
  Collected fx;
  std::string frame = "{\"type\":\"native.echo\",\"body\":{\"b\":[1,2.5],\"1\":\"x\"},\"id\":4}";
  gsf::CallResult r = host.CallMessage(HandlerOf(*p, "native.echo"), Event(100, kSessionTag, 1, kSessionTag, "native.echo"),
                                       frame, &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(fx.sends.size() == 1);
  CHECK_EQ(fx.sends[0].session, kSessionTag);
  CHECK_EQ(fx.sends[0].frame, std::string("{\"type\":\"native.echo\",\"body\":{\"1\":\"x\",\"b\":[1,2.5]},\"id\":4}"));
  double after = 0;
  CHECK(rt.counters.Value("native_example", "echoes", &after));
  CHECK_EQ(after, before + 1);
  // The child event: the session's tag and session, named after its parent.
  std::vector<QueuedEvent> q = DrainQueue();
  REQUIRE(q.size() == 1);
  CHECK_EQ(q[0].handler, std::string("native_example.echoed"));
  CHECK_EQ(q[0].name, std::string("native.echo_#1"));
  CHECK_EQ(q[0].tag, kSessionTag);
  CHECK_EQ(q[0].session, kSessionTag);
  CHECK_EQ(Json(q[0].payload), std::to_string(kSessionTag));
  // The child starts a timer; the timer's event sends native.tick to the session.
  size_t timers = rt.timers.Count();
  r = host.CallEvent(HandlerOf(*p, "native_example.echoed"), Event(101, kSessionTag, 0, kSessionTag, q[0].name), q[0].payload, &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(rt.timers.Count(), timers + 1);
  rt.timers.Clear();
  r = host.CallEvent(HandlerOf(*p, "native_example.tick"), Event(102, GSF_TAG_TIMER, GSF_EVENT_TIMER, 0, "native_example.tick"),
                     q[0].payload, &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(fx.sends.size() == 2);
  CHECK_EQ(fx.sends[1].frame, std::string("{\"type\":\"native.tick\",\"body\":{\"tag\":1}}"));
  // native.add
  r = host.CallMessage(HandlerOf(*p, "native.add"), Event(103, kSessionTag, 1, kSessionTag, "native.add"),
                       "{\"type\":\"native.add\",\"body\":{\"a\":2,\"b\":0.5}}", &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  CHECK_EQ(fx.sends.back().frame, std::string("{\"type\":\"native.add\",\"body\":{\"sum\":2.5}}"));
  r = host.CallMessage(HandlerOf(*p, "native.add"), Event(104, kSessionTag, 1, kSessionTag, "native.add"),
                       "{\"type\":\"native.add\",\"body\":{\"a\":2}}", &fx);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(r.error, std::string("native.add needs a body {a: number, b: number}"));
}

TEST(example_native_greeter) {
  const gsf::NativePlugin* p = TryLoad(FixturePath("native-greeter"));
  REQUIRE(p != nullptr);
  gsf::PluginHost& host = gsf::ProcessPluginHost();
  gsf::ProcessRuntime().config.Set("{\"client_current_version\":\"1.0.0\"}");
  DrainQueue();
  Collected fx;
  gsf::CallResult r = host.CallMessage(HandlerOf(*p, "native.greet"), Event(110, kSessionTag, 1, kSessionTag, "native.greet"),
                                       "{\"type\":\"native.greet\",\"body\":{\"name\":\"Ada\"},\"id\":1}", &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  REQUIRE(fx.sends.size() == 1);
  CHECK_EQ(fx.sends[0].frame,
           std::string("{\"type\":\"native.greet\",\"body\":{\"greeting\":\"Hello, Ada!\",\"client_version\":\"1.0.0\"},\"id\":1}"));
  r = host.CallMessage(HandlerOf(*p, "native.greet"), Event(111, kSessionTag, 1, kSessionTag, "native.greet"),
                       "{\"type\":\"native.greet\",\"body\":{}}", &fx);
  CHECK_EQ(r.status, GSF_STATUS_INVALID_ARGUMENT);
  CHECK_EQ(r.error, std::string("native.greet needs a body {name: string}"));
  r = host.CallMessage(HandlerOf(*p, "native.boom"), Event(112, kSessionTag, 1, kSessionTag, "native.boom"),
                       "{\"type\":\"native.boom\"}", &fx);
  CHECK_EQ(r.status, GSF_STATUS_INTERNAL);
  CHECK_EQ(r.error, std::string("boom"));
  r = host.CallMessage(HandlerOf(*p, "native.visit"), Event(113, kSessionTag, 1, kSessionTag, "native.visit"),
                       "{\"type\":\"native.visit\",\"body\":{\"room\":\"lobby\"}}", &fx);
  CHECK_EQ(r.status, GSF_STATUS_OK);
  std::vector<QueuedEvent> q = DrainQueue();
  REQUIRE(q.size() == 1);
  CHECK_EQ(q[0].tag, gsf::NamedTag("room:lobby"));
  CHECK_EQ(q[0].handler, std::string("native_example.visit"));
  gsf::ProcessRuntime().config.Set("{}");
}

}  // namespace plugin_services_test
