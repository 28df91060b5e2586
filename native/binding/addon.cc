// Module registration only; every function lives in the wrapper of its concept.
#include <napi.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "bindings.h"
#include "cached_reads.h"

namespace {

// glibc raises its mmap threshold to the size of every mmap'd block freed (up to 32 MiB). The
// outbound rings of event threads (about 4 MiB each) are freed when a reload or resize retires
// their threads; after the first, every new ring came from an arena, zeroed page by page (all
// resident at once) and kept by the arena when freed: RSS climbed by 8 MiB per reload until a
// trim. A fixed threshold keeps such blocks mmap'd: untouched pages cost nothing, and a freed
// one goes back to the system. An operator's own setting (environment) is left alone.
void FixMmapThreshold() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  bool tuned = tunables != nullptr && std::strstr(tunables, "mmap_threshold") != nullptr;
  if (tuned || std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

// Runs once per environment (main thread and each worker). The wrappers only
// create functions; the state behind them is process-global.
Napi::Object Init(Napi::Env env, Napi::Object exports) {
  using namespace gsf::binding;
  static std::once_flag malloc_once;
  std::call_once(malloc_once, FixMmapThreshold);
  NameTableBinding::Init(env, exports);
  TagQueueBinding::Init(env, exports);
  WorkerSlotsBinding::Init(env, exports);
  WakeSignalBinding::Init(env, exports);
  TimerStoreBinding::Init(env, exports);
  CounterStoreBinding::Init(env, exports);
  ProfilerBinding::Init(env, exports);
  ConfigBlobBinding::Init(env, exports);
  ObjectCacheBinding::Init(env, exports);
  CachedReadsBinding::Init(env, exports);
  PluginHostBinding::Init(env, exports);
  PluginEventRunBinding::Init(env, exports);
  PluginApiBinding::Init(env, exports);
  PluginLifecycleBinding::Init(env, exports);
  PluginSessionsBinding::Init(env, exports);
  PluginResultsBinding::Init(env, exports);
  FlushMailboxBinding::Init(env, exports);
  EnumLayoutBinding::Init(env, exports);
#ifdef GSF_NATIVE_TESTING
  TestingBinding::Init(env, exports);
#endif
  return exports;
}

}  // namespace

NODE_API_MODULE(gsf_native, Init)
