// Object reads of native handlers answered from the shared cache inside the native call: when a
// call's last effect is a read (GSF_OBJECT_READ) the cache can answer, its continuation runs at
// once, in native code, instead of going back through JavaScript for the fetch and a second
// call. Everything else (writes, sets, misses, unusual keys) is left in the effects for
// src/plugins/native-calls.ts, which carries it out as before.
#pragma once

#include <napi.h>

#include "../core/plugin_host.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

/**
 * Answers the trailing cached reads of a call that ended OK (`r`, its effects `fx`), one after
 * the other while each continuation again ends on one such read; a continuation's result
 * becomes the call's. Only when JavaScript allowed it for this call (kObjectReads: the event
 * holds no objects of its own yet, so the cache's copy is what a fetch would give) and this
 * thread's types match the published object store. Counts what it answered in kReadsAnswered
 * and kReadsNone.
 */
void AnswerCachedReads(CallResult& r, CollectingEffects& fx, const EventContext& ev);

class CachedReadsBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace gsf::binding
