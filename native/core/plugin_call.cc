#include "plugin_call.h"

#include <mutex>
#include <vector>

namespace gsf {

namespace {

constexpr int kSequenceBits = 40;

struct Registry {
  std::mutex mu;
  std::vector<CallState*> states;
  uint64_t next_thread = 1;
};

Registry& Threads() {
  static Registry* registry = new Registry();  // never destroyed: threads may outlive statics
  return *registry;
}

// Owns a thread's state: registered on first use, unregistered when the thread ends.
struct ThreadCall {
  CallState state;
  uint64_t thread_number;
  uint64_t sequence = 0;

  ThreadCall() {
    Registry& r = Threads();
    std::lock_guard<std::mutex> lock(r.mu);
    thread_number = r.next_thread++;
    r.states.push_back(&state);
  }
  ~ThreadCall() {
    Registry& r = Threads();
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& s : r.states) {
      if (s == &state) {
        s = r.states.back();
        r.states.pop_back();
        break;
      }
    }
  }
};

ThreadCall& This() {
  thread_local ThreadCall call;
  return call;
}

}  // namespace

CallState& ThisThreadCall() { return This().state; }

MessageOrigin OriginOf(const CallState& state) {
  MessageOrigin o;
  if (!state.message) return o;
  o.message = true;
  o.has_id = state.has_message_id;
  o.id = state.message_id;
  o.type = std::string(state.message_type);
  return o;
}

CallScope::CallScope(const NativePlugin* plugin, PluginEffects* effects, const EventContext* event, bool init,
                     const MessageOrigin* origin)
    : state_(This().state) {
  ThreadCall& t = This();
  // Thread number and sequence: unique per process without a shared counter.
  token_ = (t.thread_number << kSequenceBits) | (++t.sequence & ((uint64_t{1} << kSequenceBits) - 1));
  state_.plugin = plugin;
  state_.effects = effects;
  state_.init = init;
  state_.event = event ? *event : EventContext();
  state_.name_known = false;
  state_.children = state_.event.children;
  state_.message = origin != nullptr && origin->message;
  state_.message_type = state_.message ? std::string_view(origin->type) : std::string_view();
  state_.has_message_id = state_.message && origin->has_id;
  state_.message_id = state_.message ? origin->id : 0;
  state_.replied = false;
  state_.error.clear();
  state_.expires_at_ms = 0;
  state_.event_id.store(state_.event.event_id, std::memory_order_relaxed);
  state_.token.store(token_, std::memory_order_release);
}

CallScope::~CallScope() {
  state_.token.store(0, std::memory_order_release);
  state_.expires_at_ms = 0;
  state_.event_id.store(0, std::memory_order_relaxed);
  state_.effects = nullptr;
  state_.plugin = nullptr;
}

CallState* LiveCall(gsf_type_call call, gsf_type_status* why) {
  if (call.token == 0) {
    *why = GSF_STATUS_UNAVAILABLE;
    return nullptr;
  }
  CallState& s = This().state;
  if (s.token.load(std::memory_order_relaxed) != call.token || s.Revoked()) {
    *why = GSF_STATUS_EXPIRED;
    return nullptr;
  }
  return &s;
}

bool RevokeEventCall(uint64_t event_id) {
  if (event_id == 0) return false;
  Registry& r = Threads();
  std::lock_guard<std::mutex> lock(r.mu);
  bool found = false;
  for (CallState* s : r.states) {
    if (s->event_id.load(std::memory_order_relaxed) == event_id) {
      s->revoked_event.store(event_id, std::memory_order_release);
      found = true;
    }
  }
  return found;
}

}  // namespace gsf
