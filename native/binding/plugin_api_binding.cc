// API-service handlers of native plugins from JavaScript (ABI 1.1): a plugin's registrations,
// calling a hook for a request, continuing an event after an object fetch, and the mailbox of
// answers given outside the call that handled their request (the main thread is woken for it).
#include <cstring>
#include <mutex>

#include "../core/plugin_api.h"
#include "bindings.h"
#include "in_call_answers.h"
#include "boundary.h"
#include "main_notifier.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

Napi::Array Strings(Napi::Env env, const std::vector<std::string>& list) {
  Napi::Array out = Napi::Array::New(env, list.size());
  for (uint32_t i = 0; i < list.size(); ++i) out.Set(i, Napi::String::New(env, list[i]));
  return out;
}

}  // namespace

Napi::Value ApiRegistrationsToJs(Napi::Env env, const NativePlugin* plugin) {
  const ApiRegistrations* reg = ProcessApiHost().Find(plugin);
  if (!reg) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  Napi::Array routes = Napi::Array::New(env, reg->routes.size());
  for (uint32_t i = 0; i < reg->routes.size(); ++i) {
    Napi::Object r = Napi::Object::New(env);
    r.Set("method", reg->routes[i].method);
    r.Set("path", reg->routes[i].path);
    r.Set("name", reg->routes[i].name);
    r.Set("entry", reg->routes[i].entry);
    routes.Set(i, r);
  }
  out.Set("routes", routes);
  Napi::Array ops = Napi::Array::New(env, reg->operations.size());
  for (uint32_t i = 0; i < reg->operations.size(); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, reg->operations[i].first);
    pair.Set(1u, reg->operations[i].second);
    ops.Set(i, pair);
  }
  out.Set("operations", ops);
  out.Set("editableAccount", Strings(env, reg->editable_account));
  out.Set("editableCharacter", Strings(env, reg->editable_character));
  out.Set("noticeCategories", Strings(env, reg->notice_categories));
  out.Set("missionNormal", Strings(env, reg->mission_normal));
  out.Set("missionAchievement", Strings(env, reg->mission_achievement));
  Napi::Array gifts = Napi::Array::New(env, reg->giftable.size());
  for (uint32_t i = 0; i < reg->giftable.size(); ++i) gifts.Set(i, Strings(env, {reg->giftable[i].first, reg->giftable[i].second}));
  out.Set("giftable", gifts);
  Napi::Array campaigns = Napi::Array::New(env, reg->campaigns.size());
  for (uint32_t i = 0; i < reg->campaigns.size(); ++i) {
    Napi::Object c = Napi::Object::New(env);
    c.Set("type", reg->campaigns[i].type);
    c.Set("begin", reg->campaigns[i].begin);
    c.Set("end", reg->campaigns[i].end);
    campaigns.Set(i, c);
  }
  out.Set("campaigns", campaigns);
  Napi::Array queries = Napi::Array::New(env, reg->queries.size());
  for (uint32_t i = 0; i < reg->queries.size(); ++i) {
    const ApiRegistrations::Query& q = reg->queries[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", q.name);
    o.Set("method", q.method);
    o.Set("uri", q.uri);
    o.Set("requestFields", Strings(env, q.request));
    o.Set("responseFields", q.has_response ? Napi::Value(Strings(env, q.response)) : env.Null());
    o.Set("entry", q.entry);
    queries.Set(i, o);
  }
  out.Set("queries", queries);
  return out;
}

namespace {

Napi::Value PluginCallApi(const Napi::CallbackInfo& info) {
  uint32_t entry = IdArg(info, 0, "entry");
  ByteView args = BytesArg(info, 1, "args", true);
  Utf8Arg label(info, 2, "label");
  const double* cells = ContextCells();
  EventContext ev = EventFromCells(cells);
  CollectingEffects& fx = Collector();
  CallResult r = ProcessApiHost().Call(entry, ev, static_cast<uint64_t>(cells[kRequestId]), static_cast<uint32_t>(cells[kAnswerKind]),
                                       std::string_view(reinterpret_cast<const char*>(args.data), args.length), label.view(), &fx);
  AnswerInCall(r, fx, ev);
  return ApiResultToJs(info.Env(), r, fx, static_cast<uint64_t>(cells[kRequestId]));
}

Napi::Value PluginContinue(const Napi::CallbackInfo& info) {
  double cont = UintArg(info, 0, "continuation");
  bool found = info[1].ToBoolean().Value();
  Utf8Arg id(info, 2, "id");
  ByteView fields = BytesArg(info, 3, "fields", true);
  EventContext ev = EventFromCells(ContextCells());
  CollectingEffects& fx = Collector();
  CallResult r = ProcessApiHost().Continue(static_cast<uint64_t>(cont), ev, found, id.view(),
                                           std::string_view(reinterpret_cast<const char*>(fields.data), fields.length), &fx);
  AnswerInCall(r, fx, ev);
  return ResultToJs(info.Env(), r, fx, ev.session_id);
}

Napi::Value PluginDropContinuation(const Napi::CallbackInfo& info) {
  ProcessApiHost().DropContinuation(static_cast<uint64_t>(UintArg(info, 0, "continuation")));
  return info.Env().Undefined();
}

Napi::Value PluginApiRelease(const Napi::CallbackInfo& info) {
  ProcessApiHost().Release(static_cast<uint64_t>(UintArg(info, 0, "rid")));
  return info.Env().Undefined();
}

// pluginApiAnswered(rid): whether the request's native writer has answered.
Napi::Value PluginApiAnswered(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), ProcessApiHost().Answered(static_cast<uint64_t>(UintArg(info, 0, "rid"))));
}

// [rid, httpStatus, body | null]* of answers that finished on an event thread.
Napi::Value PluginApiPostAnswers(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) ThrowCoded(env, ErrorKind::kTypeError, kErrArgument, "answers must be an array");
  Napi::Array in = info[0].As<Napi::Array>();
  uint32_t n = in.Length();
  if (n % 3 != 0) ThrowCoded(env, ErrorKind::kRangeError, kErrArgument, "answers must be [rid, status, body] triples");
  std::vector<ApiAnswerRecord> answers;
  answers.reserve(n / 3);
  for (uint32_t i = 0; i < n; i += 3) {
    Napi::Value rid = in.Get(i), status = in.Get(i + 1), body = in.Get(i + 2);
    if (!rid.IsNumber() || !status.IsNumber() || !(body.IsString() || body.IsNull())) {
      ThrowCoded(env, ErrorKind::kTypeError, kErrArgument, "answers must be [number, number, string | null] triples");
    }
    ApiAnswerRecord a;
    a.rid = static_cast<uint64_t>(rid.As<Napi::Number>().DoubleValue());
    a.status = status.As<Napi::Number>().Int32Value();
    a.has_body = body.IsString();
    if (a.has_body) a.body = body.As<Napi::String>().Utf8Value();
    a.http = true;
    answers.push_back(std::move(a));
  }
  ProcessApiHost().PostAnswers(std::move(answers));
  return env.Undefined();
}

// One buffer of records, little-endian: f64 rid, i32 status, u8 flags (1: has a body, 2: the
// status is HTTP's already), u32 body length, u32 message length, the body's bytes, the
// message's bytes. The main thread writes bodies to sockets as these bytes: no JavaScript
// string is made per answer (and none encoded again by the socket's writer).
constexpr size_t kAnswerHead = 21;
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "answer records are read as little-endian");

Napi::Value PluginApiTakeAnswers(const Napi::CallbackInfo& info) {
  std::vector<ApiAnswerRecord> answers = ProcessApiHost().TakeAnswers();
  size_t size = 0;
  for (const ApiAnswerRecord& a : answers) size += kAnswerHead + a.body.size() + a.message.size();
  Napi::Buffer<uint8_t> out = Napi::Buffer<uint8_t>::New(info.Env(), size);
  uint8_t* at = out.Data();
  auto put = [&at](const void* p, size_t n) {
    if (n > 0) std::memcpy(at, p, n);
    at += n;
  };
  for (const ApiAnswerRecord& a : answers) {
    double rid = static_cast<double>(a.rid);
    int32_t status = a.status;
    uint8_t flags = static_cast<uint8_t>((a.has_body ? 1 : 0) | (a.http ? 2 : 0));
    uint32_t body = static_cast<uint32_t>(a.has_body ? a.body.size() : 0);
    uint32_t message = static_cast<uint32_t>(a.message.size());
    put(&rid, 8);
    put(&status, 4);
    put(&flags, 1);
    put(&body, 4);
    put(&message, 4);
    put(a.body.data(), body);
    put(a.message.data(), message);
  }
  return out;
}

// The answer callback, rung from whichever thread put an answer in the empty mailbox.
MainNotifier& Answers() {
  static MainNotifier* n = new MainNotifier("gsf-api-answers");  // leaked: other threads may ring it during exit
  return *n;
}

void Notify() { Answers().Notify(); }

Napi::Value PluginApiOnAnswers(const Napi::CallbackInfo& info) {
  static std::once_flag once;
  std::call_once(once, [] { ProcessApiHost().SetNotify(Notify); });
  Answers().Set(info);
  return info.Env().Undefined();
}

}  // namespace

void PluginApiBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<PluginCallApi>(env, exports, "pluginCallApi");
  Export<PluginContinue>(env, exports, "pluginContinue");
  Export<PluginDropContinuation>(env, exports, "pluginDropContinuation");
  Export<PluginApiRelease>(env, exports, "pluginApiRelease");
  Export<PluginApiAnswered>(env, exports, "pluginApiAnswered");
  Export<PluginApiPostAnswers>(env, exports, "pluginApiPostAnswers");
  Export<PluginApiTakeAnswers>(env, exports, "pluginApiTakeAnswers");
  Export<PluginApiOnAnswers>(env, exports, "pluginApiOnAnswers");
}

}  // namespace gsf::binding
