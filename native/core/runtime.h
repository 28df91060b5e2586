// The process-global instances behind the addon, shared by every thread.
#pragma once

#include "config_blob.h"
#include "counter_store.h"
#include "name_table.h"
#include "profiler.h"
#include "tag_queue.h"
#include "timer_store.h"
#include "wake_signal.h"

namespace gsf {

struct Runtime {
  NameTable names;
  Profiler profiler;
  WakeSignal wake;
  // Event workers wake one another through shared memory (src/events/wake.ts); the wake
  // signal only tells the main thread that a timer earlier than its next one was added.
  TagQueue queue{&profiler, nullptr};
  TimerStore timers{&queue, &wake};
  CounterStore counters;
  ConfigBlob config;
};

/**
 * The one Runtime of the process. It is created on first use and never
 * destroyed: worker threads may still be inside it while the process exits.
 */
Runtime& ProcessRuntime();

}  // namespace gsf
