// Compiles the plugin headers as C++17 with -Wall -Wextra -Werror -pedantic (build-time test).
#include "gsf_msgpack.h"
#include "gsf_plugin.h"
#include "gsf_plugin.hpp"

using namespace gsf::plugin;

static void Init(Registrar& r) {
  r.on_event("x", [](Event& ev) { ev.reply(Writer().map(1).string("k").integer(-1)); });
}

GSF_PLUGIN_CPP("header-check", "1.0.0", Init);
