#include "plugin_effects_binding.h"

#include "../core/plugin_results.h"
#include "../core/runtime.h"

namespace gsf::binding {

Effect& CollectingEffects::Next(EffectCode code) {
  if (used == list.size()) list.emplace_back();
  Effect& e = list[used++];
  e.code = code;
  return e;
}

void CollectingEffects::Send(uint64_t session, std::string_view frame, bool binary) {
  Effect& e = Next(kSend);
  e.session = session;
  e.binary = binary;
  e.a.assign(frame);
}

void CollectingEffects::Publish(std::string_view group, std::string_view json, std::string_view msgpack) {
  Effect& e = Next(kPublish);
  e.a.assign(group);
  e.b.assign(json);
  e.binary = false;
  e.session = 0;
  // The msgpack frame follows the JSON one in `b`, after its length is known from `level`.
  e.level = static_cast<int>(json.size());
  e.b.append(msgpack);
}

void CollectingEffects::Log(int level, std::string_view line) {
  Effect& e = Next(kLog);
  e.level = level;
  e.a.assign(line);
}

void CollectingEffects::ApiAnswer(uint64_t rid, int32_t status, std::string_view body, bool has_body, std::string_view message) {
  Effect& e = Next(kApiAnswer);
  e.session = rid;
  e.level = status;
  e.binary = has_body;
  e.a.assign(body);
  e.b.assign(message);
}

void CollectingEffects::ObjectRequest(int op, uint64_t continuation, std::string_view type, std::string_view name,
                                      std::string_view bytes, uint32_t mode) {
  Effect& e = Next(op == kObjectOpFetch ? kObjectFetch : op == kObjectOpFetchBy ? kObjectFetchBy : kObjectSet);
  e.session = continuation;
  e.level = static_cast<int>(mode);
  e.a.assign(type);
  e.b.assign(name);
  e.c.assign(bytes);
}

void CollectingEffects::Invoke(const HeldPush& push) {
  Effect& e = Next(kInvoke);
  e.ids.assign({push.id, push.tag, push.session_id, push.name_id, push.handler_id});
  e.a.assign(push.payload);
}

void CollectingEffects::Timer(const HeldTimerStart& timer) {
  Effect& e = Next(kTimer);
  e.ids.assign({timer.id, timer.name_id, timer.handler_id});
  e.version = timer.delay_ms;
  e.interval = timer.interval_ms;
  e.a.assign(timer.payload);
}

bool OnlyHeld(const CollectingEffects& fx) {
  for (size_t k = 0; k < fx.used; ++k) {
    if (fx.list[k].code != kInvoke && fx.list[k].code != kTimer) return false;
  }
  return true;
}

void ApplyHeld(const CollectingEffects& fx, size_t from) {
  for (size_t k = from; k < fx.used; ++k) {
    const Effect& e = fx.list[k];
    if (e.code == kInvoke) {
      ApplyHeldPush(HeldPush{e.ids[0], e.ids[1], e.ids[2], static_cast<uint32_t>(e.ids[3]), static_cast<uint32_t>(e.ids[4]), e.a});
    } else if (e.code == kTimer) {
      ApplyHeldTimer(HeldTimerStart{e.ids[0], e.version, e.interval, static_cast<uint32_t>(e.ids[1]), static_cast<uint32_t>(e.ids[2]), e.a});
    }
  }
}

void DropHeld(const CollectingEffects& fx, size_t from) {
  uint32_t transact = 0;
  for (size_t k = from; k < fx.used; ++k) {
    const Effect& e = fx.list[k];
    if (e.code == kTimer) {
      DropHeldTimer(e.ids[0]);
    } else if (e.code == kInvoke) {
      // An object_transact event that will never run: its user data is released.
      if (transact == 0) transact = ProcessRuntime().names.Find(kNativeTransactEvent);
      if (e.ids[4] == transact) ProcessResultHost().RevokeTransactionOf(e.ids[0]);
    }
  }
}

void CollectingEffects::SessionGroup(uint64_t session, std::string_view group, bool join) {
  Effect& e = Next(kSessionGroup);
  e.session = session;
  e.binary = join;
  e.a.assign(group);
}

void CollectingEffects::SessionClose(uint64_t session, std::string_view reason) {
  Effect& e = Next(kSessionClose);
  e.session = session;
  e.a.assign(reason);
}

void CollectingEffects::Broadcast(const uint64_t* ids, size_t count, std::string_view json, std::string_view msgpack) {
  Effect& e = Next(kBroadcast);
  e.binary = ids == nullptr;
  e.ids.assign(ids, ids + (ids ? count : 0));
  e.a.assign(json);
  e.b.assign(msgpack);
}

void CollectingEffects::AccountRequest(uint32_t op, uint64_t continuation, std::string_view account, uint64_t session) {
  Effect& e = Next(kAccountRequest);
  e.session = continuation;
  e.level = static_cast<int>(op);
  e.a.assign(account);
  e.ids.assign(1, session);
}

void CollectingEffects::ServiceRequest(uint32_t op, uint64_t continuation, std::string_view args) {
  Effect& e = Next(kServiceRequest);
  e.session = continuation;
  e.level = static_cast<int>(op);
  e.a.assign(args);
}

CollectingEffects& Collector() {
  thread_local CollectingEffects effects;
  effects.used = 0;
  return effects;
}

Napi::Value Bytes(Napi::Env env, std::string_view bytes) {
  return Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

namespace {

Napi::Value Str(Napi::Env env, const std::string& s) { return Napi::String::New(env, s.data(), s.size()); }
Napi::Value Num(Napi::Env env, double v) { return Napi::Number::New(env, v); }

}  // namespace

namespace {

// How many array elements an effect takes (its code included).
uint32_t Width(EffectCode code) {
  switch (code) {
    case kSend: return 3;
    case kPublish: return 4;
    case kLog: return 3;
    case kApiAnswer: return 5;
    case kObjectFetch: return 5;
    case kObjectFetchBy: return 6;
    case kObjectSet: return 4;
    case kObjectHeld: return 5;
    case kSessionGroup: return 4;
    case kSessionClose: return 3;
    case kBroadcast: return 4;
    case kAccountRequest: return 5;
    case kServiceRequest: return 4;
    case kInvoke: return 7;
    case kTimer: return 7;
  }
  return 1;
}

}  // namespace

Napi::Array EffectsToJs(Napi::Env env, const CollectingEffects& fx) {
  // Made at its final length: an array grown element by element reallocates as it goes.
  uint32_t length = 0;
  for (size_t k = 0; k < fx.used; ++k) length += Width(fx.list[k].code);
  Napi::Array out = Napi::Array::New(env, length);
  uint32_t i = 0;
  for (size_t k = 0; k < fx.used; ++k) {
    const Effect& e = fx.list[k];
    out.Set(i++, Num(env, e.code));
    switch (e.code) {
      case kSend:
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, e.binary ? Bytes(env, e.a) : Str(env, e.a));
        break;
      case kPublish: {
        std::string_view b(e.b);
        out.Set(i++, Str(env, e.a));
        out.Set(i++, Napi::String::New(env, e.b.data(), static_cast<size_t>(e.level)));
        out.Set(i++, Bytes(env, b.substr(static_cast<size_t>(e.level))));
        break;
      }
      case kLog:
        out.Set(i++, Num(env, e.level));
        out.Set(i++, Str(env, e.a));
        break;
      case kApiAnswer:  // [4, rid, status, body | null, message]
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, Num(env, e.level));
        out.Set(i++, e.binary ? Str(env, e.a) : env.Null());
        out.Set(i++, Str(env, e.b));
        break;
      case kObjectFetch:  // [5, continuation, type, id, mode]
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, Str(env, e.a));
        out.Set(i++, Str(env, e.b));
        out.Set(i++, Num(env, e.level));
        break;
      case kObjectFetchBy:  // [6, continuation, type, field, key, mode]
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, Str(env, e.a));
        out.Set(i++, Str(env, e.b));
        out.Set(i++, Bytes(env, e.c));
        out.Set(i++, Num(env, e.level));
        break;
      case kObjectSet:  // [7, type, id, fields]
        out.Set(i++, Str(env, e.a));
        out.Set(i++, Str(env, e.b));
        out.Set(i++, Bytes(env, e.c));
        break;
      case kObjectHeld:  // [8, type, id, version, stored fields]
        out.Set(i++, Str(env, e.a));
        out.Set(i++, Str(env, e.b));
        out.Set(i++, Num(env, e.version));
        out.Set(i++, Bytes(env, e.c));
        break;
      case kSessionGroup:  // [20, session, group, join 1 | leave 0]
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, Str(env, e.a));
        out.Set(i++, Num(env, e.binary ? 1 : 0));
        break;
      case kSessionClose:  // [21, session, reason]
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, Str(env, e.a));
        break;
      case kBroadcast: {  // [22, sessions | null (every session), json frame | null, msgpack frame | null]
        if (e.binary) {
          out.Set(i++, env.Null());
        } else {
          Napi::Array ids = Napi::Array::New(env, e.ids.size());
          for (uint32_t k = 0; k < e.ids.size(); ++k) ids.Set(k, Num(env, static_cast<double>(e.ids[k])));
          out.Set(i++, ids);
        }
        out.Set(i++, e.a.empty() ? env.Null() : Str(env, e.a));
        out.Set(i++, e.b.empty() ? env.Null() : Bytes(env, e.b));
        break;
      }
      case kAccountRequest:  // [23, continuation (0: none), op, account, session]
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, Num(env, e.level));
        out.Set(i++, Str(env, e.a));
        out.Set(i++, Num(env, static_cast<double>(e.ids.empty() ? 0 : e.ids[0])));
        break;
      case kServiceRequest:  // [30, continuation (0: none), op, args (msgpack array)]
        out.Set(i++, Num(env, static_cast<double>(e.session)));
        out.Set(i++, Num(env, e.level));
        out.Set(i++, Bytes(env, e.a));
        break;
      case kInvoke:  // [40, id, tag, session, name id, handler id, payload | null]
        for (int f = 0; f < 5; ++f) out.Set(i++, Num(env, static_cast<double>(e.ids[f])));
        out.Set(i++, e.a.empty() ? env.Null() : Bytes(env, e.a));
        break;
      case kTimer:  // [41, id, delay ms, interval ms, name id, handler id, payload | null]
        out.Set(i++, Num(env, static_cast<double>(e.ids[0])));
        out.Set(i++, Num(env, e.version));
        out.Set(i++, Num(env, e.interval));
        out.Set(i++, Num(env, static_cast<double>(e.ids[1])));
        out.Set(i++, Num(env, static_cast<double>(e.ids[2])));
        out.Set(i++, e.a.empty() ? env.Null() : Bytes(env, e.a));
        break;
    }
  }
  return out;
}

double* ContextCells() {
  thread_local double* cells = new double[kContextCells]();
  return cells;
}

EventContext EventFromCells(const double* c) {
  EventContext ev;
  ev.event_id = static_cast<uint64_t>(c[kEventId]);
  ev.tag = static_cast<uint64_t>(c[kTag]);
  ev.kind = static_cast<uint8_t>(c[kKind]);
  ev.session_id = static_cast<uint64_t>(c[kSessionId]);
  ev.name_id = static_cast<uint32_t>(c[kNameId]);
  ev.children = static_cast<uint32_t>(c[kChildren]);
  return ev;
}

void NoteCall(const CallResult& r) {
  double* cells = ContextCells();
  if (r.replied) cells[kReplied] = 1;
  if (r.children >= 0) cells[kChildren] = static_cast<double>(r.children);
}

Napi::Value ResultToJs(Napi::Env env, const CallResult& r, CollectingEffects& fx, uint64_t session) {
  NoteCall(r);
  if (r.expired) {
    DropHeld(fx);
    fx.used = 0;  // a timed-out call's effects are dropped
  }
  if (r.status == GSF_STATUS_OK && !r.decode_failed) {
    if (fx.used == 0) return env.Null();
    const Effect& e = fx.list[0];
    if (fx.used == 1 && e.code == kSend && e.session == session) {
      return e.binary ? Bytes(env, e.a) : Napi::String::New(env, e.a.data(), e.a.size());
    }
    // Success needs no more than its effects: an object with named fields costs several
    // property definitions per call.
    return EffectsToJs(env, fx);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("status", Napi::Number::New(env, r.status));
  out.Set("error", Napi::String::New(env, r.error));
  out.Set("effects", EffectsToJs(env, fx));
  out.Set("decodeFailed", Napi::Boolean::New(env, r.decode_failed));
  if (r.has_message_id) out.Set("messageId", Napi::Number::New(env, r.message_id));
  return out;
}

Napi::Value ApiResultToJs(Napi::Env env, const CallResult& r, CollectingEffects& fx, uint64_t rid) {
  NoteCall(r);
  bool ok = !r.expired && r.status == GSF_STATUS_OK && !r.decode_failed;
  if (ok && fx.used == 1) {
    const Effect& e = fx.list[0];
    if (e.code == kApiAnswer && e.session == rid && e.level == GSF_STATUS_OK && e.binary && e.b.empty()) {
      return Napi::String::New(env, e.a.data(), e.a.size());
    }
  }
  if (ok && fx.used > 0) return EffectsToJs(env, fx);
  // A session id no API event has: the one-send shortcut never applies.
  return ResultToJs(env, r, fx, ~uint64_t{0});
}

}  // namespace gsf::binding
