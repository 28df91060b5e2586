/* Compiles the plugin headers as C99 with -Wall -Wextra -Werror -pedantic (build-time test). */
#include "gsf_msgpack.h"
#include "gsf_plugin.h"

static gsf_type_status init(const gsf_type_host_api* host, gsf_type_call call) {
  gsf_mp_writer w;
  gsf_type_invoke_options options = gsf_invoke_options();
  gsf_mp_writer_init(&w);
  gsf_mp_write_int(&w, -1);
  host->invoke(call, gsf_str("x"), gsf_mp_writer_bytes(&w), &options, NULL);
  gsf_mp_writer_free(&w);
  return GSF_STATUS_OK;
}

GSF_PLUGIN_DEFINE("header-check", "1.0.0", init);
