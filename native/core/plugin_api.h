// API-service handlers of native plugins (ABI 1.1): REST routes, console operations, campaign
// callbacks and custom queries all are gsf_on_api hooks in one table; response writers answer
// the requests they handle, exactly once; continuations carry an event on after an object fetch.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../include/gsf_plugin.h"
#include "continuation_table.h"
#include "plugin_call.h"
#include "plugin_effects.h"
#include "plugin_host.h"

namespace gsf {

/** One API hook: a route's handler, a console operation, a campaign callback or a custom query. */
struct ApiEntry {
  const NativePlugin* plugin;
  gsf_on_api fn;
  void* user_data;
};

/** What one native plugin registered for the API service and the console, as JavaScript reads it. */
struct ApiRegistrations {
  struct Route {
    std::string method, path, name;
    uint32_t entry;
  };
  struct Campaign {
    std::string type;
    uint32_t begin, end;
  };
  struct Query {
    std::string name, method, uri;
    std::vector<std::string> request, response;
    bool has_response;
    uint32_t entry;
  };
  std::vector<Route> routes;
  /** Console operations: (1-based place in gsf_type_console_handlers, entry). */
  std::vector<std::pair<uint32_t, uint32_t>> operations;
  std::vector<std::string> editable_account, editable_character, notice_categories, mission_normal, mission_achievement;
  std::vector<std::pair<std::string, std::string>> giftable;
  std::vector<Campaign> campaigns;
  std::vector<Query> queries;
};

/**
 * An answer on its way to the main thread through the mailbox: a native writer's used outside
 * the call handling its request (a GSF_STATUS_* status, a JSON body or a failure's message), or
 * answers of events that finished on an event thread (`http`: the HTTP status and body as sent).
 */
struct ApiAnswerRecord {
  uint64_t rid;
  int32_t status;
  bool has_body;
  std::string body;
  std::string message;
  bool http = false;
};

class ApiHost {
 public:
  static constexpr uint32_t kMaxEntries = 4096;

  /** Adds a hook (registration, during init); UINT32_MAX when the table is full. */
  uint32_t AddEntry(const NativePlugin* plugin, gsf_on_api fn, void* user_data);
  const ApiEntry* Entry(uint32_t index) const;
  /** The registrations of a plugin being initialised (init runs under the loader's lock). */
  ApiRegistrations& Registrations(const NativePlugin* plugin);
  /** The registrations of a loaded plugin, or null when it registered none. */
  const ApiRegistrations* Find(const NativePlugin* plugin) const;
  /** Forgets what a plugin whose load failed registered. */
  void Forget(const NativePlugin* plugin);

  /**
   * Runs hook `entry` for API request `rid` (its writer's token), whose writer answers `kind`;
   * `label` is "operation\nmethod\npath"; `args` a msgpack map. A rerun of the same request
   * (an object conflict) may answer again.
   */
  CallResult Call(uint32_t entry, const EventContext& event, uint64_t rid, uint32_t kind, std::string_view args,
                  std::string_view label, PluginEffects* effects);

  /** Answers a writer; see gsf_type_api_writer. `body` is JSON text (has_body) or the failure message. */
  gsf_type_status Answer(gsf_type_api_writer writer, uint32_t kind, int32_t status, std::string body, bool has_body);
  /**
   * The request ended (answered or timed out): its writer is refused from now on (CONFLICT when
   * it had answered, for the last kAnsweredKept such requests; else EXPIRED).
   */
  void Release(uint64_t rid);
  /** Whether request `rid`'s writer has answered (its answer may still be in a call's effects). */
  bool Answered(uint64_t rid);
  /** Adds finished answers to the mailbox (an event thread's batch); wakes the main thread if it was empty. */
  void PostAnswers(std::vector<ApiAnswerRecord>&& answers);
  /** Answers that went to the mailbox since the last call. */
  std::vector<ApiAnswerRecord> TakeAnswers();
  /** Called (from any thread) when the mailbox gets an answer while it was empty. */
  void SetNotify(void (*notify)());

  /**
   * Keeps `then` for the event's object request; returns its id. `drop` releases `user_data` once
   * (ABI 1.2); `origin` is the message the asking call answers (its continuation answers it too).
   */
  uint64_t AddContinuation(const NativePlugin* plugin, gsf_on_object then, void* user_data, uint64_t event_id,
                           gsf_on_drop drop, MessageOrigin origin);
  /** Runs a continuation (once) with the object, or none, then releases its user data. */
  CallResult Continue(uint64_t id, const EventContext& event, bool found, std::string_view object_id, std::string_view fields,
                      PluginEffects* effects);
  /** Forgets a continuation that will not run (its event failed or timed out), releasing its user data. */
  void DropContinuation(uint64_t id) { continuations_.Drop(id); }
  /** Drops every continuation event `event_id` holds (it timed out); returns how many. */
  size_t DropEventContinuations(uint64_t event_id) { return continuations_.DropEvent(event_id); }
  /** Drops every continuation of a plugin copy (null: of every copy); returns how many. */
  size_t DropContinuationsOf(const NativePlugin* plugin) { return continuations_.DropOf(plugin); }
  /** Continuations kept (tests). */
  size_t ContinuationCount() { return continuations_.Count(); }

 private:
  struct Writer {
    uint32_t kind;
    bool answered;
    uint64_t event_id;
  };
  struct Continuation {
    const NativePlugin* plugin;
    gsf_on_object fn;
    void* user_data;
    uint64_t event_id;
    gsf_on_drop drop;
    MessageOrigin origin;
  };
  std::array<std::atomic<const ApiEntry*>, kMaxEntries> entries_{};
  std::deque<ApiEntry> entry_store_;
  uint32_t entry_count_ = 0;
  std::unordered_map<const NativePlugin*, ApiRegistrations> registrations_;

  std::mutex writers_mu_;
  std::unordered_map<uint64_t, Writer> writers_;
  std::vector<ApiAnswerRecord> mailbox_;
  void (*notify_)() = nullptr;
  // Requests released after their writer answered, newest last (a later answer gets CONFLICT).
  static constexpr size_t kAnsweredKept = 4096;
  std::deque<uint64_t> answered_order_;
  std::unordered_set<uint64_t> answered_released_;

  ContinuationTable<Continuation> continuations_;
};

/** The process's API host. */
ApiHost& ProcessApiHost();

/** The ABI 1.1 API, console and object services (plugin_api_services.cc, plugin_objects.cc). */
void FillApiServices(gsf_type_host_api* api);

}  // namespace gsf
