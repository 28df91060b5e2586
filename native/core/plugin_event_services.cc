// Host services that act for an event: invoke, reply, send, publish, timers (see
// plugin_services.cc for the rest of the table).
#include <cmath>
#include <algorithm>
#include <cstring>

#include "../include/gsf_msgpack.h"
#include "event_tags.h"
#include "json_msgpack.h"
#include "plugin_host.h"
#include "plugin_lifecycle.h"
#include "plugin_services.h"
#include "runtime.h"
#include "session_frame.h"

namespace gsf {
namespace services {

namespace {

// The live call a service acts for; token 0 is allowed where `outside_ok` (plugin threads),
// while the server takes such calls (not once it is stopping).
bool Caller(gsf_type_call call, bool outside_ok, CallState** s, gsf_type_status* why) {
  *s = LiveCall(call, why);
  if (*s != nullptr) return true;
  if (!outside_ok || call.token != 0) return false;
  if (OutsideCallsOpen()) return true;
  *why = GSF_STATUS_UNAVAILABLE;
  return false;
}

// The handler id of an event native code may target, or 0 (with the failure noted).
// Whether the plugin whose init is running registers `event` itself (its handlers are pending
// until init returns, and are known to every thread right after).
bool OwnPendingEvent(const CallState* s, std::string_view event) {
  if (s == nullptr || !s->init || s->plugin == nullptr) return false;
  for (const NativeHandler& h : s->plugin->pending) {
    if (!h.message && h.name == event) return true;
  }
  return false;
}

uint32_t TargetEvent(CallState* s, const char* what, std::string_view event, gsf_type_status* status) {
  uint32_t id = ValidName(event) ? Host().runtime().names.Find(event) : 0;
  if (id == 0 && OwnPendingEvent(s, event)) id = Host().runtime().names.Intern(event);
  if (id == 0 || !(Host().KnowsEvent(id) || OwnPendingEvent(s, event))) {
    *status = Note(s, GSF_STATUS_NOT_FOUND, std::string(what) + ": no plugin registers an event named '" + std::string(event) + "'");
    return 0;
  }
  return id;
}

// Bytes whose pointer is NULL while their length is not 0 (a buffer the plugin lost): refused, as
// every service that takes bytes refuses them, rather than taken for none.
bool NullWithLength(CallState* s, const char* what, const char* arg, gsf_type_borrowed_bytes b, gsf_type_status* status) {
  if (b.ptr != nullptr || b.len == 0) return false;
  *status = Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + arg + " is NULL but its length is not 0");
  return true;
}

bool CheckPayload(CallState* s, const char* what, gsf_type_borrowed_bytes bytes, gsf_type_status* status) {
  if (NullWithLength(s, what, "payload", bytes, status)) return false;
  std::string_view payload = View(bytes);
  std::string error;
  if (payload.empty() || MsgpackValid(payload, &error)) return true;
  *status = Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": payload is not one msgpack value (" + error + ")");
  return false;
}

// Whether the call acts for an event whose effects are collected (lifecycle hooks, init and
// plugin threads act for none: what they invoke or start happens at once).
bool InEvent(const CallState* s) { return s != nullptr && !s->init && s->event.event_id != 0 && s->effects != nullptr; }

// A timer firing `event` after `delay_ms`, then every `interval_ms` if > 0.
gsf_type_status AddTimer(gsf_type_call call, const char* what, double delay_ms, double interval_ms,
                         gsf_type_borrowed_str event, gsf_type_borrowed_bytes payload, uint64_t* timer_id) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, true, &s, &status)) return status;
    if (!std::isfinite(delay_ms) || delay_ms < 0 || !std::isfinite(interval_ms) || interval_ms < 0) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": times must be finite, non-negative ms");
    }
    uint32_t handler = TargetEvent(s, what, View(event), &status);
    if (handler == 0) return status;
    if (!CheckPayload(s, what, payload, &status)) return status;
    TimerStore& timers = Host().runtime().timers;
    uint64_t id;
    if (InEvent(s)) {
      // Held with the event's other effects (started once its changes are durable, or never).
      id = timers.Reserve();
      s->effects->Timer(HeldTimerStart{id, delay_ms, interval_ms, handler, handler, View(payload)});
    } else {
      id = timers.Add(delay_ms, interval_ms, handler, handler, payload.ptr, payload.ptr ? payload.len : 0);
    }
    if (timer_id) *timer_id = id;
    return GSF_STATUS_OK;
  });
}

// The frame of one message for a session of the given codec, in a per-thread buffer.
gsf_type_status Frame(CallState* s, const char* what, bool msgpack, std::string_view type, std::string_view body,
                      const double* id, std::string** frame) {
  thread_local std::string buffers[2];
  std::string& out = buffers[msgpack ? 1 : 0];
  out.clear();
  std::string error;
  if (!EncodeFrame(msgpack, type, body, id, &out, &error)) {
    return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + error);
  }
  *frame = &out;
  return GSF_STATUS_OK;
}

}  // namespace

gsf_type_status Invoke(gsf_type_call call, gsf_type_borrowed_str event, gsf_type_borrowed_bytes payload,
                       const gsf_type_invoke_options* options, uint64_t* event_id) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, true, &s, &status)) return status;
    gsf_type_invoke_options o = gsf_invoke_options();
    if (options) {
      if (options->struct_size < 8) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: options.struct_size is too small");
      // A plugin built for an older minor passes a shorter struct: read what it has.
      std::memcpy(&o, options, std::min<size_t>(options->struct_size, sizeof o));
    }
    std::string_view name = View(event);
    uint32_t handler = TargetEvent(s, "invoke", name, &status);
    if (handler == 0) return status;
    if (!CheckPayload(s, "invoke", payload, &status)) return status;
    // Texts as bytes are: a NULL with a length is a lost buffer, not an empty name.
    if (o.name.ptr == nullptr && o.name.len != 0) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: options.name is NULL but its length is not 0");
    bool in_event = s && !s->init && s->event.event_id != 0;  // lifecycle hooks run in no event
    uint64_t tag;
    switch (o.tag_mode) {
      case GSF_TAG_MODE_VALUE:
        if (!IsValidTag(o.tag)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: tag must be below 2^53");
        tag = o.tag;
        break;
      case GSF_TAG_MODE_NAMED:
        if (!TagName(o.tag_name)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: options.tag_name must be UTF-8 (NULL only with length 0)");
        tag = NamedTag(View(o.tag_name));
        break;
      case GSF_TAG_MODE_RANDOM:
        tag = RandomTag();
        break;
      case GSF_TAG_MODE_DEFAULT: {
        // SPEC 6.2.4, as resolveTag in src/events/tags.ts.
        const FlagCache& f = Flags();
        if (!f.inherit) tag = f.random ? RandomTag() : 0;
        else if (!in_event || s->event.kind == GSF_EVENT_TIMER || s->event.kind == GSF_EVENT_API) tag = RandomTag();
        else tag = s->event.tag;
        break;
      }
      default:
        return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: unknown tag mode " + std::to_string(o.tag_mode));
    }
    Runtime& rt = Host().runtime();
    std::string child;
    std::string_view event_name = View(o.name);
    if (event_name.empty() && in_event) {
      // "{parent}_#{n}": the n-th event this one created.
      if (!s->name_known) {
        s->name = rt.names.NameOf(s->event.name_id);
        s->name_known = true;
      }
      child = NameTable::ChildName(s->name, ++s->children);
      event_name = child;
    } else if (event_name.empty()) {
      event_name = name;
    } else if (!ValidName(event_name)) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: options.name is not valid UTF-8");
    } else if (event_name.size() > kMaxEventNameBytes) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "invoke: options.name is longer than " + std::to_string(kMaxEventNameBytes) + " bytes");
    } else if (in_event) {
      ++s->children;  // a child given a name still counts in its parent's creation order
    }
    EventInput in;
    in.tag = tag;
    in.name_id = rt.names.InternEventName(event_name);
    in.handler_id = handler;
    in.session_id = in_event ? s->event.session_id : 0;
    in.kind = GSF_EVENT_USER;
    in.payload = payload.ptr;
    in.payload_len = payload.ptr ? payload.len : 0;
    uint64_t id;
    if (InEvent(s)) {
      // Held with the event's other effects: queued once its changes are durable, or never.
      id = rt.queue.ReserveIds(1);
      s->effects->Invoke(HeldPush{id, in.tag, in.session_id, in.name_id, in.handler_id, View(payload)});
    } else {
      id = rt.queue.Push(in);
    }
    if (event_id) *event_id = id;
    return GSF_STATUS_OK;
  });
}

gsf_type_status Reply(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_bytes body) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, false, &s, &status)) return status;
    if (!s->message || !s->effects) return Note(s, GSF_STATUS_UNAVAILABLE, "reply: this call handles no client message");
    if (NullWithLength(s, "reply", "body", body, &status)) return status;
    std::string_view t = type.len ? View(type) : s->message_type;
    double id = s->message_id;
    std::string* frame;
    bool msgpack = IsMsgpackSession(s->event.session_id);
    status = Frame(s, "reply", msgpack, t, View(body), s->has_message_id ? &id : nullptr, &frame);
    if (status == GSF_STATUS_OK) {
      s->effects->Send(s->event.session_id, *frame, msgpack);
      s->replied = true;
    }
    return status;
  });
}

gsf_type_status Send(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str type, gsf_type_borrowed_bytes body) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, false, &s, &status)) return status;
    if (!s->effects) return Note(s, GSF_STATUS_UNAVAILABLE, "send: no running event");
    if (session_id == 0 || !IsValidTag(session_id)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "send: no such session id");
    if (NullWithLength(s, "send", "body", body, &status)) return status;
    std::string* frame;
    bool msgpack = IsMsgpackSession(session_id);
    status = Frame(s, "send", msgpack, View(type), View(body), nullptr, &frame);
    if (status == GSF_STATUS_OK) s->effects->Send(session_id, *frame, msgpack);
    return status;
  });
}

gsf_type_status Publish(gsf_type_call call, gsf_type_borrowed_str group, gsf_type_borrowed_str type,
                        gsf_type_borrowed_bytes body) {
  return Guard([&]() -> gsf_type_status {
    CallState* s;
    gsf_type_status status;
    if (!Caller(call, false, &s, &status)) return status;
    if (!s->effects) return Note(s, GSF_STATUS_UNAVAILABLE, "publish: no running event");
    if (!ValidName(View(group))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "publish: group must be non-empty UTF-8");
    if (NullWithLength(s, "publish", "body", body, &status)) return status;
    std::string *json, *msgpack;
    status = Frame(s, "publish", false, View(type), View(body), nullptr, &json);
    if (status == GSF_STATUS_OK) status = Frame(s, "publish", true, View(type), View(body), nullptr, &msgpack);
    if (status == GSF_STATUS_OK) s->effects->Publish(View(group), *json, *msgpack);
    return status;
  });
}

gsf_type_status TimerAfter(gsf_type_call call, double delay_ms, gsf_type_borrowed_str event,
                           gsf_type_borrowed_bytes payload, uint64_t* timer_id) {
  return AddTimer(call, "timer_after", delay_ms, 0, event, payload, timer_id);
}

gsf_type_status TimerEvery(gsf_type_call call, double interval_ms, gsf_type_borrowed_str event,
                           gsf_type_borrowed_bytes payload, uint64_t* timer_id) {
  if (!(interval_ms > 0)) {
    gsf_type_status why;
    return Note(LiveCall(call, &why), GSF_STATUS_INVALID_ARGUMENT, "timer_every: the interval must be > 0 ms");
  }
  return AddTimer(call, "timer_every", interval_ms, interval_ms, event, payload, timer_id);
}

gsf_type_status TimerCancel(uint64_t timer_id) {
  return Guard([&]() -> gsf_type_status {
    if (ProcessNativeTimers().Cancel(timer_id)) return GSF_STATUS_OK;  // a timer_start timer: its user data is released
    return Host().runtime().timers.Cancel(timer_id) ? GSF_STATUS_OK : GSF_STATUS_NOT_FOUND;
  });
}


}  // namespace services
}  // namespace gsf
