// ABI 1.2 sessions and accounts for native plugins: session opened/closed hooks, the account
// continuations of events, and the host services (join, leave, close, broadcast, login, logout,
// locate, account of a session). Group changes, closes and broadcasts are effects of the call;
// account calls are requests its caller (src/plugins/native-calls.ts) makes of the account
// manager, whose answer runs the continuation in the same event.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../include/gsf_plugin.h"
#include "continuation_table.h"
#include "plugin_call.h"
#include "plugin_effects.h"
#include "plugin_host.h"

namespace gsf {

/**
 * What JavaScript hands a session hook: a managed handler's SessionOpenedInfo / SessionClosedInfo.
 * An opened hook sees the opened fields only, a closed hook the closed ones.
 */
struct SessionHookInput {
  uint32_t close_code = 0;
  std::string_view version, codec, address;  // opened
  std::string_view reason, account;          // closed
};

/** The answer JavaScript hands an account continuation (see PluginContinueAccount). */
struct AccountAnswer {
  /** login: GSF_LOGIN_*; logout: 1 when it was logged in; locate, of_session: unused. */
  uint32_t code = 0;
  /** login: the replaced or holding session; locate: the account's session (0: none). */
  uint64_t session_id = 0;
  /** of_session: the session's account (`has_account` false: none). */
  bool has_account = false;
  std::string_view account;
};

class SessionHost {
 public:
  static constexpr uint32_t kMaxHooks = 1024;

  /** Adds a hook during its plugin's init; UINT32_MAX when the table is full. */
  uint32_t AddHook(const NativePlugin* plugin, bool closed, gsf_on_session fn, void* user_data, gsf_on_drop drop);
  /** The hooks of the copy loaded from `path`: (index, closed) in registration order. */
  std::vector<std::pair<uint32_t, bool>> HooksOf(std::string_view path);
  /** Releases the hooks' user data of a copy (null: of every copy), once; they run no more. Returns how many. */
  size_t ReleaseHooks(const NativePlugin* plugin);
  /** Runs hook `index` for the session event `event`; a released hook runs nothing. */
  CallResult CallHook(uint32_t index, const EventContext& event, const SessionHookInput& input, PluginEffects* effects);

  /** Keeps `then` for an account call of event `event_id` (asked by a call answering `origin`); returns its id. */
  uint64_t AddContinuation(const NativePlugin* plugin, uint32_t op, std::string_view account, uint64_t session_id,
                           gsf_on_account then, void* user_data, gsf_on_drop drop, uint64_t event_id, MessageOrigin origin);
  /** Runs a continuation (once) with the answer, then releases its user data. */
  CallResult Continue(uint64_t id, const EventContext& event, const AccountAnswer& answer, PluginEffects* effects);
  /** Forgets a continuation that will not run, releasing its user data. */
  void DropContinuation(uint64_t id) { continuations_.Drop(id); }
  /** Drops the continuations of an event (it timed out or failed); returns how many. */
  size_t DropEventContinuations(uint64_t event_id) { return continuations_.DropEvent(event_id); }
  /** Drops the continuations of a copy (null: every copy); returns how many. */
  size_t DropContinuationsOf(const NativePlugin* plugin) { return continuations_.DropOf(plugin); }
  size_t ContinuationCount() { return continuations_.Count(); }

 private:
  struct Hook {
    const NativePlugin* plugin;
    bool closed;
    gsf_on_session fn;
    void* user_data;
    gsf_on_drop drop;
    std::atomic<bool> released{false};
  };
  struct Continuation {
    const NativePlugin* plugin;
    uint32_t op;
    std::string account;
    uint64_t session_id;
    gsf_on_account fn;
    void* user_data;
    gsf_on_drop drop;
    uint64_t event_id;
    MessageOrigin origin;
  };
  std::mutex hooks_mu_;
  std::deque<Hook> hooks_;
  std::array<std::atomic<Hook*>, kMaxHooks> hook_index_{};

  ContinuationTable<Continuation> continuations_;
};

/** The process's session host. */
SessionHost& ProcessSessionHost();

/** The ABI 1.2 session and account services. */
void FillSessionServices(gsf_type_host_api* api);

}  // namespace gsf
