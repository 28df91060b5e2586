// Module registration only; every function lives in the wrapper of its concept.
#include <napi.h>

#include "bindings.h"
#include "cached_reads.h"

namespace {

// Runs once per environment (main thread and each worker). The wrappers only
// create functions; the state behind them is process-global.
Napi::Object Init(Napi::Env env, Napi::Object exports) {
  using namespace gsf::binding;
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
  PluginApiBinding::Init(env, exports);
  FlushMailboxBinding::Init(env, exports);
  EnumLayoutBinding::Init(env, exports);
#ifdef GSF_NATIVE_TESTING
  TestingBinding::Init(env, exports);
#endif
  return exports;
}

}  // namespace

NODE_API_MODULE(gsf_native, Init)
