// Shared by the host-services files (plugin_services*.cc): the pieces every callback uses.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "../include/gsf_plugin.h"
#include "plugin_call.h"

namespace gsf {

class PluginHost;

namespace services {

PluginHost& Host();
std::string_view View(gsf_type_borrowed_str s);
std::string_view View(gsf_type_borrowed_bytes b);
/** Non-empty, valid UTF-8. */
bool ValidName(std::string_view s);
/** A borrowed string that is non-empty, valid UTF-8 (false for a null pointer). */
bool Text(gsf_type_borrowed_str s);
/** A named tag's name: empty, or valid UTF-8 (false for a null pointer with a length). */
bool TagName(gsf_type_borrowed_str s);
/** A counter's category and name: both non-empty, valid UTF-8, and neither '.' nor '..'. */
bool CounterNames(gsf_type_borrowed_str category, gsf_type_borrowed_str name);
/** "<what> of plugin '<name>'": how a message names a plugin's request. */
std::string Named(const CallState* s, const char* what);
/**
 * Whether services that take gsf_no_call() (invoke, timers from a plugin's own threads) are
 * open: from a server's start until its stop has run the stop hooks (then GSF_STATUS_UNAVAILABLE,
 * as a managed invoke from outside an event throws GSF_ERR_SHUTTING_DOWN).
 */
void SetOutsideCallsOpen(bool open);
bool OutsideCallsOpen();
/** Records why a service failed on the live call (a later set_error of the plugin replaces it). */
gsf_type_status Note(CallState* s, gsf_type_status status, const std::string& message);

/** The runtime flags the services read, re-read when the main thread publishes new ones. */
struct FlagCache {
  uint64_t version = UINT64_MAX;
  std::string msgpack;  // the snapshot as a msgpack map
  bool inherit = true, random = true;
  double verbose = 0;
  double minloglevel = 0;
  bool has_minloglevel = false;  // the settings are published (not yet during the first plugins' init)
  bool also_stderr = false;      // alsologtostderr
};
const FlagCache& Flags();

/** Runs a callback body: nothing may unwind out of a C function. */
template <typename F>
gsf_type_status Guard(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return GSF_STATUS_RESOURCE_EXHAUSTED;
  } catch (...) {
    return GSF_STATUS_INTERNAL;
  }
}

/** The callbacks of plugin_event_services.cc. */
gsf_type_status Invoke(gsf_type_call call, gsf_type_borrowed_str event, gsf_type_borrowed_bytes payload,
                       const gsf_type_invoke_options* options, uint64_t* event_id);
gsf_type_status Reply(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_bytes body);
gsf_type_status Send(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str type, gsf_type_borrowed_bytes body);
gsf_type_status Publish(gsf_type_call call, gsf_type_borrowed_str group, gsf_type_borrowed_str type,
                        gsf_type_borrowed_bytes body);
gsf_type_status TimerAfter(gsf_type_call call, double delay_ms, gsf_type_borrowed_str event,
                           gsf_type_borrowed_bytes payload, uint64_t* timer_id);
gsf_type_status TimerEvery(gsf_type_call call, double interval_ms, gsf_type_borrowed_str event,
                           gsf_type_borrowed_bytes payload, uint64_t* timer_id);
gsf_type_status TimerCancel(uint64_t timer_id);

}  // namespace services
}  // namespace gsf
