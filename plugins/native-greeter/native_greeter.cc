// native-greeter: a native gsf plugin in C++ with gsf_plugin.hpp (lambdas, RAII buffers,
// exceptions turned into statuses at the boundary).
//
//   native.greet {name}   replies {greeting, client_version}: the flag client_current_version;
//                         a body without a non-empty name is INVALID_ARGUMENT;
//   native.visit {room}   counts a visit under one named tag per room, so visits of a room are
//                         serialised across sessions without a lock, and replies {room, tag};
//   native_example.visit  (event, tag "room:<room>") bumps native_example/visits;
//   native.boom           throws a std::runtime_error: the client gets GSF_ERR_MESSAGE_HANDLER_FAILED.
#include <stdexcept>
#include <string>

#include "gsf_plugin.hpp"

using namespace gsf::plugin;

static void Init(Registrar& r) {
  host::counter_define("native_example", "greetings", "Greetings sent by native-greeter");
  host::counter_define("native_example", "visits", "Room visits counted by native-greeter");

  r.on_message("native.greet", [](Event& ev) {
    auto name = ev.payload().find("name");
    auto text = name ? name->string() : std::nullopt;
    if (!text || text->empty()) throw Error(GSF_STATUS_INVALID_ARGUMENT, "native.greet needs a body {name: string}");
    // Flags arrive as msgpack too; the reader is only valid inside the callback.
    auto version = host::flag("client_current_version", [](Reader& v) { return std::string(v.string().value_or("")); });
    Writer body;
    body.map(2).string("greeting").string("Hello, " + std::string(*text) + "!");
    body.string("client_version").string(version.value_or(""));
    ev.reply(body);
    host::counter_increase("native_example", "greetings");
  });

  r.on_message("native.visit", [](Event& ev) {
    auto room = ev.payload().find("room");
    auto text = room ? room->string() : std::nullopt;
    if (!text) throw Error(GSF_STATUS_INVALID_ARGUMENT, "native.visit needs a body {room: string}");
    std::string tag_name = "room:" + std::string(*text);
    Writer payload;
    payload.string(*text);
    ev.invoke("native_example.visit", &payload, Invoke().named_tag(tag_name));
    Writer body;
    body.map(2).string("room").string(*text).string("tag").integer(static_cast<int64_t>(host::named_tag(tag_name)));
    ev.reply(body);
  });

  r.on_event("native_example.visit", [](Event&) { host::counter_increase("native_example", "visits"); });

  r.on_message("native.boom", [](Event&) { throw std::runtime_error("boom"); });
}

GSF_PLUGIN_CPP("native-greeter", "1.0.0", Init);
