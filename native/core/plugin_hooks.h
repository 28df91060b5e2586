// What every host service that calls into a plugin shares: a borrowed view of a string, running
// a hook with no exception crossing the boundary, the result of a call, and releasing the user
// data gsf held for the plugin.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "../include/gsf_plugin.h"
#include "plugin_call.h"
#include "plugin_host.h"

namespace gsf::hooks {

inline gsf_type_borrowed_str Borrow(std::string_view s) { return gsf_type_borrowed_str{s.data(), s.size()}; }

/** Calls the plugin's destructor of `user_data` (none: nothing); one that throws is stopped here. */
inline void ReleaseData(gsf_on_drop drop, void* user_data) {
  if (!drop) return;
  try {
    drop(user_data);
  } catch (...) {
  }
}

/** The result of a hook that returned `status`: EXPIRED with its effects dropped if its event timed out meanwhile. */
inline CallResult Finish(CallState& state, gsf_type_status status) {
  CallResult result;
  result.children = state.children;
  if (state.Revoked()) {
    result.status = GSF_STATUS_EXPIRED;
    result.error = "the event timed out while its handler ran; its effects were dropped";
    result.expired = true;
    return result;
  }
  result.status = status;
  result.replied = state.replied;
  if (status != GSF_STATUS_OK) result.error = state.error;
  return result;
}

/** Runs a plugin hook; an exception that crosses the boundary becomes GSF_STATUS_INTERNAL with its text. */
template <typename F>
gsf_type_status RunHook(CallScope& scope, F&& hook) {
  try {
    return hook();
  } catch (const std::exception& e) {
    scope.state().error = std::string("an exception crossed the plugin boundary: ") + e.what();
  } catch (...) {
    scope.state().error = "an exception crossed the plugin boundary";
  }
  return GSF_STATUS_INTERNAL;
}

}  // namespace gsf::hooks
