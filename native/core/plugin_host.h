// Native plugins: loading (every check before any plugin code runs), the registry of their
// handlers, and calling them with the current call set around each one.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../include/gsf_plugin.h"
#include "plugin_call.h"
#include "plugin_effects.h"

namespace gsf {

struct Runtime;

/** Why a load failed; the binding reports it as `reason`. */
enum class LoadFailure {
  kMissing, kNotLibrary, kTruncated, kForeignMachine, kCannotOpen, kNoEntry, kAbiMajor, kAbiMinor, kStructSize,
  kBadDescriptor, kNameTaken, kInitFailed, kDuplicate, kTooMany,
};

/** A failed load: one line naming the path and the reason. */
class PluginLoadError : public std::runtime_error {
 public:
  PluginLoadError(LoadFailure failure, const std::string& message) : std::runtime_error(message), failure_(failure) {}
  LoadFailure failure() const { return failure_; }
  /** A short tag of the failure ("missing", "abi_major", ...). */
  const char* reason() const;

 private:
  LoadFailure failure_;
};

struct NativePlugin;

/** A registered event or message handler. */
struct NativeHandler {
  const NativePlugin* plugin;
  bool message;
  std::string name;  // event name or message type
  uint32_t name_id;  // interned in the runtime's name table
  gsf_on_event fn;   // gsf_on_message has the same signature
  void* user_data;
};

/** A timeout handler a plugin registered (ABI 1.2). */
struct NativeTimeoutHandler {
  gsf_on_event_timeout fn;
  void* user_data;
  gsf_on_drop drop;
};

/** A loaded plugin. Never unloaded. */
struct NativePlugin {
  std::string path;  // as resolved (realpath)
  std::string name, version;
  void* library = nullptr;
  const gsf_type_plugin* descriptor = nullptr;
  // The descriptor's lifecycle extension (ABI 1.2), null where its struct_size ends before it.
  gsf_on_start on_start = nullptr;
  gsf_on_stop on_stop = nullptr;
  gsf_on_unload on_unload = nullptr;
  std::vector<NativeTimeoutHandler> timeout_handlers;  // registered during init
  // A reload retired this copy: its on_unload ran and its handlers' user data was released.
  mutable std::atomic<bool> retired{false};
  std::vector<uint32_t> handlers;  // indices into the host's handler table
  // During init: what it registers, and the first conflict with another plugin.
  std::vector<NativeHandler> pending;
  std::string conflict;
  // A reload's fresh copy: its init may register what the older copies of its name did.
  bool replacing = false;
};

/** The outcome of one handler call. */
struct CallResult {
  gsf_type_status status = GSF_STATUS_OK;
  std::string error;
  /** The event was timed out while the handler ran: its effects must be dropped. */
  bool expired = false;
  /** The client frame could not be decoded; the handler did not run. */
  bool decode_failed = false;
  /** The request id of the message the handler ran for (failure frames carry it). */
  bool has_message_id = false;
  double message_id = 0;
  /** The call replied to its message: a failure is then logged, not answered a second time. */
  bool replied = false;
  /**
   * The event's child count after the call (its next call goes on from there, SPEC 6.3); -1 when
   * no plugin code ran.
   */
  int64_t children = -1;
};

/** A continuation's result carries the request id of the message its origin answers (failure frames carry it). */
inline void AnswersOrigin(CallResult& r, const MessageOrigin& origin) {
  if (!origin.message) return;
  r.has_message_id = origin.has_id;
  r.message_id = origin.id;
}

class PluginHost {
 public:
  static constexpr uint32_t kMaxHandlers = 4096;

  explicit PluginHost(Runtime* runtime);
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  /**
   * Loads the plugin library at `path`, once per process: a second load of the same file
   * returns the first result (or throws its error again). Init's log lines go to `effects`.
   * Throws PluginLoadError.
   *
   * With `replaces` (a reload: a fresh copy of a rebuilt library at a new path), the library
   * must be the plugin of that name, and it may take that name and register the events and
   * message types its older copies did; name lookups then find the new copy's handlers. The
   * older copies stay loaded and callable by their handler indices (events that were running
   * on them finish there).
   */
  const NativePlugin& Load(std::string_view path, PluginEffects* effects, std::string_view replaces = {});
  /** The handler with this index, or null. */
  const NativeHandler* Handler(uint32_t index) const;
  /** Makes a managed event a target of native invoke and timers. */
  void DeclareEvent(std::string_view name);
  /** Whether some plugin (native or managed) handles the event with this interned id. */
  bool KnowsEvent(uint32_t name_id) const;

  /** Runs an event handler with `payload` (msgpack); its effects go to `effects`. */
  CallResult CallEvent(uint32_t handler, const EventContext& event, std::string_view payload, PluginEffects* effects);
  /** Decodes a client frame of the event's session, runs its message handler, encodes the replies. */
  CallResult CallMessage(uint32_t handler, const EventContext& event, std::string_view frame, PluginEffects* effects);
  /**
   * Cuts off the call running event `event_id` (it timed out), and releases the continuations
   * that event still held (their destructors run); true if a call was running.
   */
  bool Revoke(uint64_t event_id);
  /** Releases the continuations event `event_id` still holds (it failed: none of them will run). */
  void DropContinuations(uint64_t event_id);
  /** The loaded copy at `path` (resolved like Load), or null. */
  const NativePlugin* Find(std::string_view path);
  /** Every copy loaded so far, oldest first. */
  std::vector<const NativePlugin*> Copies();

  const gsf_type_host_api* Api() const { return &api_; }
  /**
   * Testing only: checks descriptors as a gsf of ABI minor `minor` would (an older host), to
   * prove that plugins targeting an older minor load there and newer ones are refused.
   */
  void SetHostMinorForTesting(uint16_t minor) {
    host_minor_ = minor;
    api_.abi_minor = minor;  // what the host table tells plugins, as an older gsf's would
  }
  Runtime& runtime() const { return *runtime_; }
  /** Where lines logged outside a running call go. */
  PluginEffects& fallback() { return fallback_; }

  // Registration from a plugin's init (host services).
  gsf_type_status Register(CallState& init, bool message, std::string_view name, gsf_on_event fn, void* user_data);
  gsf_type_status RegisterTimeoutHandler(CallState& init, gsf_on_event_timeout fn, void* user_data, gsf_on_drop drop);

 private:
  const NativePlugin& LoadLocked(const std::string& path, PluginEffects* effects, std::string_view replaces);
  void CheckDescriptor(const std::string& path, const gsf_type_plugin* d);
  const NativeHandler* OwnerLocked(bool message, std::string_view name) const;

  Runtime* runtime_;
  gsf_type_host_api api_;
  uint16_t host_minor_ = GSF_PLUGIN_ABI_MINOR;
  StderrEffects fallback_;
  std::mutex load_mu_;
  std::deque<NativePlugin> plugins_;
  std::unordered_map<std::string, const NativePlugin*> by_path_;
  std::unordered_map<std::string, std::string> failed_;  // path -> message (kept: loads are once per process)
  std::unordered_map<std::string, LoadFailure> failed_kind_;
  std::unordered_map<std::string, uint32_t> events_, messages_;  // name -> handler index
  std::array<std::atomic<const NativeHandler*>, kMaxHandlers> handlers_{};
  std::deque<NativeHandler> handler_store_;
  uint32_t handler_count_ = 0;
  mutable std::shared_mutex known_mu_;
  std::unordered_set<uint32_t> known_events_;
};

/** The process's plugin host, over ProcessRuntime(). */
PluginHost& ProcessPluginHost();

/** Fills the host-services table (plugin_services.cc). */
void FillHostApi(gsf_type_host_api* api);

}  // namespace gsf
