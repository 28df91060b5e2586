// The native call running on this thread: what host services act on, and how a timed-out
// event's call is cut off from the world.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "../include/gsf_plugin.h"

namespace gsf {

struct PluginEffects;
struct NativePlugin;

/** Milliseconds since the Unix epoch (JavaScript's Date.now()). */
inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/** What the caller knows of the event a handler runs for. */
struct EventContext {
  uint64_t event_id = 0;
  uint64_t tag = 0;
  uint64_t session_id = 0;
  uint8_t kind = 0;
  uint32_t name_id = 0;
  /**
   * The children the event created before this call, in its earlier calls (a continuation's
   * handler, a managed handler of the same event): its default child names go on from here.
   */
  uint32_t children = 0;
};

/**
 * One thread's current call. The token, the event id and the revocation are atomics because
 * a timeout on another thread reads and sets them; everything else is the owner's alone.
 */
struct CallState {
  std::atomic<uint64_t> token{0};
  std::atomic<uint64_t> event_id{0};
  std::atomic<uint64_t> revoked_event{0};

  const NativePlugin* plugin = nullptr;
  PluginEffects* effects = nullptr;
  bool init = false;     // the plugin's init: registration is allowed, no event runs
  EventContext event;
  std::string name;      // the event's name (resolved on first need)
  bool name_known = false;
  uint32_t children = 0;  // the event's children so far, this call's included (SPEC 6.3's creation order)
  // A message handler's request.
  bool message = false;
  std::string_view message_type;
  bool has_message_id = false;
  double message_id = 0;
  bool replied = false;  // `reply` succeeded in this call
  std::string error;     // set_error's message, or a service's own
  // A call with a deadline (on_stop's, ms since the Unix epoch; 0: none): past it, the call
  // is expired as a revoked one is. Read and written by the owner only.
  int64_t expires_at_ms = 0;

  /** Whether the call's event was timed out, or its deadline passed (its effects are refused from then on). */
  bool Revoked() const {
    if (expires_at_ms != 0 && NowMs() >= expires_at_ms) return true;
    uint64_t id = event_id.load(std::memory_order_relaxed);
    return id != 0 && revoked_event.load(std::memory_order_acquire) == id;
  }
};

/**
 * The client message a call answers: a message handler's request, kept by every continuation the
 * handler asks for (and by theirs), so that a reply from a continuation answers the original
 * request with its type and id, as a managed handler's reply after an await does.
 */
struct MessageOrigin {
  bool message = false;
  bool has_id = false;
  double id = 0;
  std::string type;
};

/** The message `state`'s call answers (none outside message handlers and their continuations). */
MessageOrigin OriginOf(const CallState& state);

/** This thread's call state (registered so that Revoke can find it). */
CallState& ThisThreadCall();

/**
 * Makes a call current on this thread for its lifetime, with a fresh token; the state is
 * reset when it ends, so the token is refused from then on. A continuation's call passes the
 * message its origin answers (`origin`, kept alive by the caller for the scope's lifetime).
 */
class CallScope {
 public:
  CallScope(const NativePlugin* plugin, PluginEffects* effects, const EventContext* event, bool init,
            const MessageOrigin* origin = nullptr);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  CallState& state() { return state_; }
  gsf_type_call call() const { return gsf_type_call{token_}; }

 private:
  CallState& state_;
  uint64_t token_;
};

/**
 * The live call `call` names, if it is this thread's current one and not revoked. Otherwise
 * null, with `why` GSF_STATUS_UNAVAILABLE (no call given) or GSF_STATUS_EXPIRED.
 */
CallState* LiveCall(gsf_type_call call, gsf_type_status* why);

/** Revokes the call running event `event_id`, on whichever thread; true if one was found. */
bool RevokeEventCall(uint64_t event_id);

}  // namespace gsf
