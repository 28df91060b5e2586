// Profile figures become REST output verbatim, so the keys below are part of
// the public API (SPEC 2.6) and follow native.ts exactly.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../core/runtime.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

void SetStat(Napi::Object& o, const char* mean, const char* stdev, const char* max, const StatView& s) {
  o.Set(mean, s.mean);
  o.Set(stdev, s.stdev);
  o.Set(max, s.max);
}

Napi::Object SummaryToJs(Napi::Env env, const SummaryWindow& w) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("count", static_cast<double>(w.count));
  SetStat(o, "execution_time_mean_in_sec", "execution_time_stdev_in_sec", "execution_time_max_in_sec", w.execution);
  SetStat(o, "io_wait_time_mean_in_sec", "io_wait_time_stdev_in_sec", "io_wait_time_max_in_sec", w.io_wait);
  SetStat(o, "queue_time_mean_in_sec", "queue_time_stdev_in_sec", "queue_time_max_in_sec", w.queue);
  return o;
}

Napi::Object EventWindowToJs(Napi::Env env, const EventWindow& w, const uint64_t* timeout_count) {
  static const char* const kObjectKeys[6] = {
      "object_create_count_mean", "object_count_mean",      "object_cache_hit_rate_mean",
      "object_nolock_rate_mean",  "object_lease_rate_mean", "object_null_rate_mean",
  };
  Napi::Object o = Napi::Object::New(env);
  o.Set("execution_count", static_cast<double>(w.count));
  o.Set("rollback_count_mean", w.rollback_mean);
  o.Set("rollback_count_max", w.rollback_max);
  SetStat(o, "execution_time_mean_in_sec", "execution_time_stdev_in_sec", "execution_time_max_in_sec", w.execution);
  SetStat(o, "handler_time_mean_in_sec", "handler_time_stdev_in_sec", "handler_time_max_in_sec", w.handler);
  SetStat(o, "io_wait_time_mean_in_sec", "io_wait_time_stdev_in_sec", "io_wait_time_max_in_sec", w.io_wait);
  SetStat(o, "queue_time_mean_in_sec", "queue_time_stdev_in_sec", "queue_time_max_in_sec", w.queue);
  if (timeout_count) o.Set("timeout_count", static_cast<double>(*timeout_count));
  for (size_t i = 0; i < 6; ++i) o.Set(kObjectKeys[i], w.object_means[i]);
  return o;
}

Napi::Object EventToJs(Napi::Env env, const EventView& v) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("all_time", EventWindowToJs(env, v.all_time, &v.timeout_count));
  o.Set("last1min", EventWindowToJs(env, v.last1min, nullptr));
  return o;
}

Napi::Value ProfilerEnable(const Napi::CallbackInfo& info) {
  ProcessRuntime().profiler.Enable(BoolArg(info, 0, "on"));
  return info.Env().Undefined();
}

Napi::Value ProfilerReset(const Napi::CallbackInfo& info) {
  ProcessRuntime().profiler.Reset();
  return info.Env().Undefined();
}

Napi::Value ProfilerResetting(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), ProcessRuntime().profiler.Resetting());
}

Napi::Value ProfilerSummary(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SummaryView v = ProcessRuntime().profiler.Summary();
  Napi::Object o = Napi::Object::New(env);
  o.Set("all_time", SummaryToJs(env, v.all_time));
  o.Set("last1min", SummaryToJs(env, v.last1min));
  return o;
}

Napi::Value ProfilerEvent(const Napi::CallbackInfo& info) {
  Utf8Arg name(info, 0, "name");
  Runtime& rt = ProcessRuntime();
  uint32_t id = rt.names.Find(name.view());
  EventView v;
  if (id == 0 || !rt.profiler.Event(id, &v)) return info.Env().Null();
  return EventToJs(info.Env(), v);
}

Napi::Value ProfilerAll(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto order = static_cast<ProfileOrder>(IntegerArg(info, 0, "order", 0, 6));
  Runtime& rt = ProcessRuntime();
  std::vector<std::pair<std::string, EventView>> views;
  for (EventView& v : rt.profiler.All()) views.emplace_back(rt.names.NameOf(v.name_id), v);
  SortEventViews(views, order);
  Napi::Array out = Napi::Array::New(env, views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, views[i].first);
    pair.Set(1u, EventToJs(env, views[i].second));
    out.Set(static_cast<uint32_t>(i), pair);
  }
  return out;
}

Napi::Object HistogramToJs(Napi::Env env, const HistogramView& h) {
  Napi::Object o = Napi::Object::New(env);
  Napi::Array buckets = Napi::Array::New(env, h.buckets.size());
  for (size_t i = 0; i < h.buckets.size(); ++i) buckets.Set(static_cast<uint32_t>(i), static_cast<double>(h.buckets[i]));
  o.Set("buckets", buckets);
  o.Set("sum", h.sum);
  return o;
}

// {bounds, events: [[name, {count, execution, handler, io_wait, queue}], ...]} in name order.
Napi::Value ProfilerHistograms(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Runtime& rt = ProcessRuntime();
  std::vector<std::pair<std::string, EventHistograms>> all;
  for (EventHistograms& h : rt.profiler.Histograms()) all.emplace_back(rt.names.NameOf(h.name_id), h);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Napi::Array bounds = Napi::Array::New(env, kHistogramBounds.size());
  for (size_t i = 0; i < kHistogramBounds.size(); ++i) bounds.Set(static_cast<uint32_t>(i), kHistogramBounds[i]);
  Napi::Array events = Napi::Array::New(env, all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const EventHistograms& h = all[i].second;
    Napi::Object o = Napi::Object::New(env);
    o.Set("count", static_cast<double>(h.count));
    o.Set("execution", HistogramToJs(env, h.execution));
    o.Set("handler", HistogramToJs(env, h.handler));
    o.Set("io_wait", HistogramToJs(env, h.io_wait));
    o.Set("queue", HistogramToJs(env, h.queue));
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, all[i].first);
    pair.Set(1u, o);
    events.Set(static_cast<uint32_t>(i), pair);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("bounds", bounds);
  out.Set("events", events);
  return out;
}

}  // namespace

void ProfilerBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<ProfilerEnable>(env, exports, "profilerEnable");
  Export<ProfilerReset>(env, exports, "profilerReset");
  Export<ProfilerResetting>(env, exports, "profilerResetting");
  Export<ProfilerSummary>(env, exports, "profilerSummary");
  Export<ProfilerEvent>(env, exports, "profilerEvent");
  Export<ProfilerAll>(env, exports, "profilerAll");
  Export<ProfilerHistograms>(env, exports, "profilerHistograms");
}

}  // namespace gsf::binding
