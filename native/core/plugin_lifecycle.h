// ABI 1.2: what gsf runs and holds for a native plugin copy besides its handlers: its lifecycle
// hooks (on_start, on_stop, on_unload), its timeout handlers, and the timers that carry user
// data (timer_start). A copy's timers and held user data end when a reload retires it and when
// the server stops; each piece of user data is released exactly once (gsf_on_drop).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../include/gsf_plugin.h"
#include "plugin_call.h"
#include "plugin_effects.h"
#include "plugin_host.h"
#include "tag_queue.h"

namespace gsf {

/** The event every timer_start timer fires: its payload is [timer id, plugin name]. */
constexpr std::string_view kNativeTimerEvent = "_native.timer";

/** Timers of native plugins that run a function with user data (timer_start). */
class NativeTimers {
 public:
  /** Starts one; the caller checked the arguments. Returns the timer's id. */
  uint64_t Start(const NativePlugin* plugin, double delay_ms, double interval_ms, std::string_view name, gsf_on_timer fn,
                 void* user_data, gsf_on_drop drop);
  /**
   * Records one whose start an event holds: its id is reserved, and `held` is what starts it
   * (ApplyHeldTimer) when the event's effects are made; DropHeldTimer(id) ends it instead.
   * `held.payload` views `*payload`.
   */
  uint64_t StartHeld(const NativePlugin* plugin, double delay_ms, double interval_ms, std::string_view name, gsf_on_timer fn,
                     void* user_data, gsf_on_drop drop, HeldTimerStart* held, std::string* payload);
  /** Runs the timer a fired event's payload names (its key); a cancelled or ended one runs nothing (OK). */
  CallResult Run(uint64_t key, const EventContext& event, PluginEffects* effects);
  /** Cancels a timer_start timer by the id the plugin got: true if it was one and still live (its user data is released). */
  bool Cancel(uint64_t id);
  /** Ends every timer of a copy (null: of every copy), releasing their user data; returns how many. */
  size_t End(const NativePlugin* plugin);
  /** Live timers (tests). */
  size_t Count();
  /**
   * Events of timers that were cancelled before they ran (a timed-out event of the timer tag):
   * a one-shot timer among them will never run, so it ends and its user data is released.
   */
  void RunsCancelled(const std::vector<DroppedEvent>& dropped);

 private:
  struct Timer {
    const NativePlugin* plugin;
    gsf_on_timer fn;
    void* user_data;
    gsf_on_drop drop;
    bool repeating;
    uint64_t timer_id;   // the timer store's id, what the plugin was given
    int running = 0;     // runs in progress (a cancel while one runs releases after it)
    bool ended = false;  // cancelled, ended, or a one-shot that fired
  };
  void EndLocked(uint64_t key, Timer& t, std::vector<std::pair<gsf_on_drop, void*>>* drops);

  std::mutex mu_;
  std::unordered_map<uint64_t, Timer> timers_;    // by the key the fired event's payload carries
  std::unordered_map<uint64_t, uint64_t> by_id_;  // timer store id -> key, while cancellable
  uint64_t next_key_ = 1;
};

NativeTimers& ProcessNativeTimers();

/** The outcome of a lifecycle hook or timeout handler. */
struct HookResult {
  bool ran = false;  // the copy has the hook
  gsf_type_status status = GSF_STATUS_OK;
  std::string error;
};

/** Runs the copy's on_start on this thread, its effects to `effects`. */
HookResult RunStartHook(const NativePlugin* plugin, PluginEffects* effects);
/**
 * Runs the copy's on_stop on this thread with the deadline (ms since the Unix epoch). Past the
 * deadline its host calls fail with GSF_STATUS_EXPIRED, and its log lines go to the fallback.
 */
HookResult RunStopHook(const NativePlugin* plugin, int64_t deadline_ms, PluginEffects* effects);
/** Calls every timeout handler of the copy for a timed-out event. */
void RunTimeoutHandlers(const NativePlugin* plugin, std::string_view name, uint64_t event_id, uint64_t tag,
                        uint64_t session_id, PluginEffects* effects);
/**
 * Ends what gsf holds for a copy (null: every copy) at run time: its timers and the continuations
 * of its events, releasing their user data. Returns how many pieces were released.
 */
size_t EndCopyHoldings(const NativePlugin* plugin);
/**
 * A reload retires the copy: ends its holdings, releases its timeout handlers' user data, then
 * calls its on_unload. Once per copy; false when it was retired already.
 */
bool RetireCopy(const NativePlugin* plugin, PluginEffects* effects);
/** Releases the timeout handlers' user data of a copy whose load failed. */
void ReleaseHandlerData(NativePlugin* plugin);

/** The ABI 1.2 lifecycle, destructor and timeout services (object_fetch_v2 in plugin_objects.cc). */
void FillLifecycleServices(gsf_type_host_api* api);

}  // namespace gsf
