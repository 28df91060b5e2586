// Object fetches of native handlers looked up in the shared cache, for in_call_answers.h: the
// types of this thread's object store as JavaScript registered them (objReadTypes), and the
// cached copy of a fetch as a native handler gets it.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

#include "plugin_effects_binding.h"

namespace gsf::binding {

/** A fetch the cache answered. */
struct CachedAnswer {
  bool found = false;
  std::string id;
  /** The object as the handler gets it: `{id, ...fields}` (msgpack). */
  std::string fields;
  /** The cached entry: its version and its stored fields (found only). */
  uint64_t version = 0;
  std::string stored;
};

/**
 * Looks the fetch of effect `e` (kObjectFetch or kObjectFetchBy, either mode) up in the cache;
 * false when JavaScript must carry it out: a miss, a stale key, a type this thread's store does
 * not know, or an object stored before a field was added (JavaScript gives it the default).
 */
bool LookupCached(const Effect& e, CachedAnswer* out);

class CachedReadsBinding {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace gsf::binding
