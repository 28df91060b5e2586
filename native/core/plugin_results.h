// ABI 1.2 objects outside events, flags, callable counters, monitors, cluster and authenticator
// calls for native plugins. Asynchronous calls (object_create, cluster and authenticator calls)
// are requests in the call's effects (PluginEffects::ServiceRequest, a msgpack array of their
// arguments) that the caller (src/plugins/native-results.ts) carries out through the managed
// API; the answer runs the call's gsf_on_result continuation in the same event. Transactions
// run as events of their own (`_native.transact`). Declarations (flags, callable counters,
// monitors) are read by JavaScript at registration and made through the managed plugin API.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../include/gsf_plugin.h"
#include "continuation_table.h"
#include "plugin_call.h"
#include "plugin_effects.h"
#include "plugin_host.h"

namespace gsf {

/** The event object_transact queues: its payload is [transaction key, plugin name]. */
constexpr std::string_view kNativeTransactEvent = "_native.transact";

/** The `op` of PluginEffects::ServiceRequest (ServiceOp in src/native.ts); args as listed. */
enum ServiceOp : uint32_t {
  kServiceCreate = 1,         // [type, id | nil, fields map | nil]
  kServiceDelete = 2,         // [type, id]
  kServiceClusterInvoke = 3,  // [server, event, payload | nil, tag | nil, name | nil]
  kServiceSendToAccount = 4,  // [account, type, body | nil]
  kServiceAuthenticate = 5,   // [request map]
  kServicePersonalInfo = 6,   // [request map]
};

/** What JavaScript hands a gsf_on_result continuation (borrowed for the call). */
struct ResultAnswer {
  gsf_type_status status = GSF_STATUS_OK;
  std::string_view code, message, id, value;
  uint64_t number = 0;
};

/** What a plugin declared during init, as JavaScript reads it. */
struct NativeDeclarations {
  struct Flag {
    std::string name, description, default_value;  // default_value: one msgpack value
    uint32_t type;
  };
  struct Monitor {
    std::string category, name;
    double threshold;
  };
  std::vector<Flag> flags;
  std::vector<uint32_t> callables;  // indices of ResultHost's callable table
  std::vector<Monitor> monitors;
};

/**
 * Reads an object from this thread's object cache (set by the addon, whose threads know the
 * declared types): 0 found (`fields` set), 1 the cache knows there is none, 2 not cached or no
 * cache on this thread, 3 no such type.
 */
using CachedObjectReader = int (*)(std::string_view type, std::string_view id, std::string* fields);
void SetCachedObjectReader(CachedObjectReader reader);
CachedObjectReader GetCachedObjectReader();

class ResultHost {
 public:
  /** Continuation ids start here: above the object continuations', below 2^53. */
  static constexpr uint64_t kFirstContinuation = uint64_t{1} << 48;
  static constexpr uint32_t kMaxCallables = 4096;

  /** Keeps `then` for a request of event `event_id` (asked by a call answering `origin`); returns its id. */
  uint64_t AddContinuation(const NativePlugin* plugin, uint32_t op, gsf_on_result then, void* user_data, gsf_on_drop drop,
                           uint64_t event_id, MessageOrigin origin);
  /** Runs a continuation (once) with the answer, then releases its user data. */
  CallResult Continue(uint64_t id, const EventContext& event, const ResultAnswer& answer, PluginEffects* effects);
  void DropContinuation(uint64_t id) { continuations_.Drop(id); }
  size_t DropEventContinuations(uint64_t event_id) { return continuations_.DropEvent(event_id); }
  size_t DropContinuationsOf(const NativePlugin* plugin) { return continuations_.DropOf(plugin); }
  size_t ContinuationCount() { return continuations_.Count(); }

  /** Keeps a transaction until its event ended; returns its key. */
  uint64_t AddTransaction(const NativePlugin* plugin, gsf_on_transaction fn, gsf_on_result done, void* user_data,
                          gsf_on_drop drop);
  /** Forgets a transaction that was never queued (nothing is released: the caller got the failure). */
  void ForgetTransaction(uint64_t key);
  /** Runs a transaction's body once (again on a conflict); an ended one runs nothing (OK). */
  CallResult RunTransaction(uint64_t key, const EventContext& event, PluginEffects* effects);
  /**
   * The transaction committed or failed: runs `done` (if any) with the outcome, then releases its
   * user data. Without `done` a failure is the result (the event fails with it).
   */
  CallResult FinishTransaction(uint64_t key, const EventContext& event, const ResultAnswer& answer, PluginEffects* effects);
  /** Ends a transaction whose event timed out or whose copy ended: `done` does not run; its user data is released. */
  void DropTransaction(uint64_t key);
  /** Notes the event a transaction runs in (`RevokeTransactionOf` finds it by it). */
  void BindTransactionEvent(uint64_t key, uint64_t event_id);
  /**
   * The event of a transaction will never finish it (timed out, or cancelled before it ran):
   * released now, or when its body returns if it runs now; `done` does not run.
   */
  void RevokeTransactionOf(uint64_t event_id);
  /** Ends a copy's transactions not finished (null: every copy), releasing their user data; returns how many. */
  size_t EndTransactionsOf(const NativePlugin* plugin);
  size_t TransactionCount();

  /** The declarations of a plugin whose init runs (under the loader's lock) or ran. */
  NativeDeclarations& Declarations(const NativePlugin* plugin);
  const NativeDeclarations* FindDeclarations(const NativePlugin* plugin);
  /** Adds a callable counter during init; UINT32_MAX when the table is full. */
  uint32_t AddCallable(const NativePlugin* plugin, std::string_view category, std::string_view name, std::string_view description,
                       gsf_on_counter fn, void* user_data, gsf_on_drop drop);
  /** The callable's category, name and description (false: no such index). */
  bool CallableInfo(uint32_t index, std::string* category, std::string* name, std::string* description);
  /**
   * Reads a callable counter: 1 with `value`, 0 no value now (NOT_FOUND, or released with its
   * copy), -1 failed (`error`).
   */
  int ReadCallable(uint32_t index, double* value, std::string* error);
  /** Releases a copy's callables (null: every copy), once; returns how many. */
  size_t ReleaseCallables(const NativePlugin* plugin);
  /**
   * Forgets a copy that never served (its init failed or conflicted): its declarations go, and
   * its callables no longer name it, since the next copy loaded may take its address.
   */
  void ForgetPlugin(const NativePlugin* plugin);

 private:
  struct Continuation {
    const NativePlugin* plugin;
    uint32_t op;
    gsf_on_result fn;
    void* user_data;
    gsf_on_drop drop;
    uint64_t event_id;
    MessageOrigin origin;
  };
  struct Transaction {
    const NativePlugin* plugin;
    gsf_on_transaction fn;
    gsf_on_result done;
    void* user_data;
    gsf_on_drop drop;
    int running = 0;
    uint64_t event_id = 0;
    bool revoked = false;  // released when its running body returns
  };
  struct Callable {
    const NativePlugin* plugin;
    std::string category, name, description;
    gsf_on_counter fn;
    void* user_data;
    gsf_on_drop drop;
    bool released = false;
  };
  std::mutex mu_;
  ContinuationTable<Continuation> continuations_{kFirstContinuation};
  std::unordered_map<uint64_t, Transaction> transactions_;
  uint64_t next_transaction_ = 1;
  std::unordered_map<const NativePlugin*, NativeDeclarations> declarations_;
  std::deque<Callable> callables_;
};

/** The process's result host. */
ResultHost& ProcessResultHost();

/** The ABI 1.2 services of plugin_object_services.cc and plugin_remote_services.cc. */
void FillResultServices(gsf_type_host_api* api);

}  // namespace gsf
