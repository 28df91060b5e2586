/*
 * native-echo: a native gsf plugin in C, written to be read.
 *
 *   native.echo   replies with the body it got, counts the echo in native_example/echoes,
 *                 and invokes the child event native_example.echoed;
 *   native_example.echoed  (child event, same tag as its parent) starts a 10 ms timer;
 *   native_example.tick    (timer event) sends `native.tick` to the session that echoed;
 *   native.add {a, b}      replies {sum: a + b}; any other body is INVALID_ARGUMENT.
 *
 * Bodies and payloads are msgpack whatever the session's codec: gsf_msgpack.h reads and
 * writes them. Everything the host offers comes through `host`, set once by init.
 */
#include "gsf_msgpack.h"
#include "gsf_plugin.h"

static const gsf_type_host_api* host;

/* A failing status with a message: the client gets GSF_ERR_MESSAGE_HANDLER_FAILED, the log the text. */
static gsf_type_status fail(gsf_type_call call, gsf_type_status status, const char* message) {
  host->set_error(call, gsf_str(message));
  return status;
}

static gsf_type_status on_echo(gsf_type_call call, const gsf_type_event_info* event, gsf_type_borrowed_bytes body,
                               void* user_data) {
  gsf_mp_writer payload;
  gsf_type_status status;
  (void)user_data;
  /* An empty type answers with the request's type; the body goes back as it came. */
  status = host->reply(call, gsf_str(NULL), body);
  if (status != GSF_STATUS_OK) return status;
  host->counter_increase(gsf_str("native_example"), gsf_str("echoes"), 1, NULL);
  /* A child event: no options, so it inherits this event's tag and is named native.echo_#1. */
  gsf_mp_writer_init(&payload);
  gsf_mp_write_uint(&payload, event->session_id);
  status = host->invoke(call, gsf_str("native_example.echoed"), gsf_mp_writer_bytes(&payload), NULL, NULL);
  gsf_mp_writer_free(&payload);
  return status;
}

static gsf_type_status on_echoed(gsf_type_call call, const gsf_type_event_info* event, gsf_type_borrowed_bytes payload,
                                 void* user_data) {
  (void)event;
  (void)user_data;
  /* The payload (the session id) travels on to the timer event. */
  return host->timer_after(call, 10, gsf_str("native_example.tick"), payload, NULL);
}

static gsf_type_status on_tick(gsf_type_call call, const gsf_type_event_info* event, gsf_type_borrowed_bytes payload,
                               void* user_data) {
  gsf_mp_reader reader;
  gsf_mp_writer body;
  int64_t session;
  gsf_type_status status;
  (void)user_data;
  gsf_mp_reader_init(&reader, payload.ptr, payload.len);
  if (!gsf_mp_read_int(&reader, &session)) return fail(call, GSF_STATUS_INVALID_ARGUMENT, "tick: no session id");
  /* {"tag": <this event's tag>}: timer events run on the timer tag, 1. */
  gsf_mp_writer_init(&body);
  gsf_mp_write_map(&body, 1);
  gsf_mp_write_cstr(&body, "tag");
  gsf_mp_write_uint(&body, event->tag);
  status = host->send(call, (uint64_t)session, gsf_str("native.tick"), gsf_mp_writer_bytes(&body));
  gsf_mp_writer_free(&body);
  return status;
}

static gsf_type_status on_add(gsf_type_call call, const gsf_type_event_info* event, gsf_type_borrowed_bytes body,
                              void* user_data) {
  gsf_mp_reader map, a, b;
  gsf_mp_writer reply;
  double x, y;
  gsf_type_status status;
  (void)event;
  (void)user_data;
  gsf_mp_reader_init(&map, body.ptr, body.len);
  if (!gsf_mp_map_find(&map, "a", &a) || !gsf_mp_read_double(&a, &x) || !gsf_mp_map_find(&map, "b", &b) ||
      !gsf_mp_read_double(&b, &y)) {
    return fail(call, GSF_STATUS_INVALID_ARGUMENT, "native.add needs a body {a: number, b: number}");
  }
  gsf_mp_writer_init(&reply);
  gsf_mp_write_map(&reply, 1);
  gsf_mp_write_cstr(&reply, "sum");
  gsf_mp_write_double(&reply, x + y);
  status = gsf_mp_writer_ok(&reply) ? host->reply(call, gsf_str(NULL), gsf_mp_writer_bytes(&reply)) : GSF_STATUS_RESOURCE_EXHAUSTED;
  gsf_mp_writer_free(&reply);
  return status;
}

/* Runs once per process, before any event: define counters, register handlers. */
static gsf_type_status init(const gsf_type_host_api* h, gsf_type_call call) {
  gsf_type_status status;
  host = h;
  host->counter_define(gsf_str("native_example"), gsf_str("echoes"), gsf_str("Messages echoed by native-echo"), 0, 0);
  if ((status = host->register_message(call, gsf_str("native.echo"), on_echo, NULL)) != GSF_STATUS_OK) return status;
  if ((status = host->register_message(call, gsf_str("native.add"), on_add, NULL)) != GSF_STATUS_OK) return status;
  if ((status = host->register_event(call, gsf_str("native_example.echoed"), on_echoed, NULL)) != GSF_STATUS_OK) return status;
  return host->register_event(call, gsf_str("native_example.tick"), on_tick, NULL);
}

GSF_PLUGIN_DEFINE("native-echo", "1.0.0", init);
