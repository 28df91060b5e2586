/*
 * The handlers bench/native measures, twins of the managed ones: a trivial event, the ~50 µs
 * CPU-bound event (bench/cpu-work.ts's loop, same iterations), and the session echo.
 */
#include "gsf_msgpack.h"
#include "gsf_plugin.h"

static const gsf_type_host_api* host;
static uint32_t sink;

static gsf_type_status noop(gsf_type_call call, const gsf_type_event_info* event, gsf_type_borrowed_bytes payload,
                            void* user_data) {
  (void)call;
  (void)event;
  (void)payload;
  (void)user_data;
  return GSF_STATUS_OK;
}

/* cpuWork of bench/cpu-work.ts: the same xorshift steps on 32 bits. */
static gsf_type_status cpu(gsf_type_call call, const gsf_type_event_info* event, gsf_type_borrowed_bytes payload,
                           void* user_data) {
  gsf_mp_reader r;
  int64_t iterations, i;
  uint32_t x = 0x9e3779b9u;
  (void)event;
  (void)user_data;
  gsf_mp_reader_init(&r, payload.ptr, payload.len);
  if (!gsf_mp_read_int(&r, &iterations)) {
    host->set_error(call, gsf_str("bench_native.cpu needs the iteration count"));
    return GSF_STATUS_INVALID_ARGUMENT;
  }
  for (i = 0; i < iterations; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
  }
  sink ^= x;
  return GSF_STATUS_OK;
}

static gsf_type_status echo(gsf_type_call call, const gsf_type_event_info* event, gsf_type_borrowed_bytes body,
                            void* user_data) {
  (void)event;
  (void)user_data;
  return host->reply(call, gsf_str(NULL), body);
}

static gsf_type_status init(const gsf_type_host_api* h, gsf_type_call call) {
  gsf_type_status s;
  host = h;
  if ((s = host->register_event(call, gsf_str("bench_native.noop"), noop, NULL)) != GSF_STATUS_OK) return s;
  if ((s = host->register_event(call, gsf_str("bench_native.cpu"), cpu, NULL)) != GSF_STATUS_OK) return s;
  return host->register_message(call, gsf_str("echo"), echo, NULL);
}

GSF_PLUGIN_DEFINE("native-bench", "0.0.1", init);
