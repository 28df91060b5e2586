// Native event handlers run from the worker's claim without JavaScript per event.
//
// pluginRunEvents(handler, meta, timings, bytes) runs the claimed events from kRunFrom while
// they are events (not network frames) of the handler the first one names: for each, it marks
// the event started in the slot's progress cells exactly as the worker's JavaScript does (the
// start, the name slot, then the compare-and-swap a timeout makes fail), calls the plugin, and
// records the event's start and handler time in `timings`. It stops at the first call that gives
// JavaScript something to do (effects, a failure, reads to count): that event is started and
// called, and its result is the return value for the worker to settle as if the handler had
// just returned it (src/events/worker/serve.ts). Cells kRunNext, kRunStarted and kRunState say
// where it stopped and why.
#include <algorithm>
#include <atomic>
#include <chrono>

#include "../core/plugin_host.h"
#include "../core/runtime.h"
#include "../core/tag_queue.h"
#include "bindings.h"
#include "boundary.h"
#include "in_call_answers.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

namespace {

constexpr double kNetworkKind = GSF_EVENT_NETWORK;  // a client frame: message handlers take those

double CellIndex(Napi::Env env, const double* cells, ContextCell cell, double max, const char* what) {
  double v = cells[cell];
  if (!(v >= 0 && v <= max && v == static_cast<double>(static_cast<int64_t>(v)))) {
    ThrowCoded(env, ErrorKind::kRangeError, kErrArgument, what);
  }
  return v;
}

Napi::Value PluginRunEvents(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t handler = IdArg(info, 0, "handler");
  DoubleView meta = Float64Arg(info, 1, "meta");
  DoubleView timings = Float64Arg(info, 2, "timings");
  ByteView bytes = BytesArg(info, 3, "bytes", false);
  double* cells = ContextCells();
  const size_t claimed = std::min(meta.length / kTakeStride, timings.length / kCompleteStride);
  const int slot = static_cast<int>(CellIndex(env, cells, kRunSlot, TagQueue::kMaxSlots - 1, "the run's slot is out of range"));
  const size_t to = static_cast<size_t>(CellIndex(env, cells, kRunTo, static_cast<double>(claimed), "the run's end lies outside meta or timings"));
  const size_t from = static_cast<size_t>(CellIndex(env, cells, kRunFrom, static_cast<double>(to), "the run's start lies after its end"));
  const double started_cell = cells[kRunStarted];
  if (!(started_cell >= -1 && started_cell < static_cast<double>(to) && started_cell == static_cast<int32_t>(started_cell))) {
    ThrowCoded(env, ErrorKind::kRangeError, kErrArgument, "the last started index must be -1 or a claimed event");
  }
  const double start_ms = cells[kRunStartMs];
  if (!(start_ms >= 0)) ThrowCoded(env, ErrorKind::kRangeError, kErrArgument, "the run's start must be a time in ms");

  std::atomic<int32_t>* progress = ProcessRuntime().queue.ProgressCells() + static_cast<size_t>(slot) * kProgressStride;
  PluginHost& host = ProcessPluginHost();
  const auto t0 = std::chrono::steady_clock::now();
  const auto since_ms = [&t0] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  int32_t started = static_cast<int32_t>(started_cell);
  double last_end = start_ms;  // ms after the claim
  const double handler_id = from < to ? meta.data[from * kTakeStride + kTakeHandlerId] : -1;
  Napi::Value result = env.Null();
  RunState state = kRunAll;
  size_t i = from;
  for (; i < to; ++i) {
    const double* m = meta.data + i * kTakeStride;
    if (m[kTakeHandlerId] != handler_id || m[kTakeKind] == kNetworkKind) break;
    const double offset = m[kTakePayloadOffset], length = m[kTakePayloadLength];
    if (!(offset >= 0 && length >= 0 && offset + length <= static_cast<double>(bytes.length))) {
      ThrowCoded(env, ErrorKind::kRangeError, kErrArgument, "a claimed payload lies outside bytes");
    }
    // Started as serve.ts starts an event: the start, the name slot, then the swap.
    progress[kProgressStartUs].store(static_cast<int32_t>(std::min(last_end * 1000, 2147483647.0)), std::memory_order_relaxed);
    progress[kProgressNameId].store(0, std::memory_order_relaxed);
    int32_t expected = started;
    if (!progress[kProgressIndex].compare_exchange_strong(expected, static_cast<int32_t>(i))) {
      state = kRunRevoked;
      break;
    }
    started = static_cast<int32_t>(i);
    double* t = timings.data + i * kCompleteStride;
    t[TimingField::kStartMs] = last_end;
    t[TimingField::kNameId] = m[kTakeNameId];
    cells[kEventId] = m[kTakeId];
    cells[kTag] = m[kTakeTag];
    cells[kKind] = m[kTakeKind];
    cells[kSessionId] = m[kTakeSessionId];
    cells[kNameId] = m[kTakeNameId];
    cells[kObjectReads] = 1;  // a new event holds no objects
    cells[kReadsAnswered] = cells[kReadsNone] = 0;
    cells[kAccountReads] = 1;  // nor account calls on their way
    cells[kChildren] = 0;      // nor children
    EventContext ev = EventFromCells(cells);
    CollectingEffects& fx = Collector();
    std::string_view payload(reinterpret_cast<const char*>(bytes.data) + static_cast<size_t>(offset), static_cast<size_t>(length));
    CallResult r = host.CallEvent(handler, ev, payload, &fx);
    AnswerInCall(r, fx, ev);
    // A timed-out call's effects are dropped (as ResultToJs drops them); the next swap fails.
    // A new event that succeeded holding no objects makes its held invokes and timers here,
    // as JavaScript would when it finishes.
    const bool ok = r.status == GSF_STATUS_OK && !r.decode_failed && cells[kReadsAnswered] == 0;
    const bool clean = ok && (r.expired || OnlyHeld(fx));
    if (clean && r.expired) DropHeld(fx);
    else if (clean) ApplyHeld(fx);
    if (!clean) {
      result = ResultToJs(env, r, fx, ev.session_id);
      state = kRunStopped;
      break;
    }
    const double end = start_ms + since_ms();
    t[TimingField::kHandlerMs] = std::max(0.0, end - last_end);
    t[TimingField::kIoWaitMs] = 0;
    last_end = end;
  }
  cells[kRunNext] = static_cast<double>(i);
  cells[kRunStarted] = started;
  cells[kRunState] = state;
  return result;
}

}  // namespace

void PluginEventRunBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<PluginRunEvents>(env, exports, "pluginRunEvents");
}

}  // namespace gsf::binding
