// The object cache and the object store's published configuration.
#include "../core/object_cache.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

uint32_t TypeArg(const Napi::CallbackInfo& info, size_t i) { return IdArg(info, i, "type"); }

uint64_t VersionArg(const Napi::CallbackInfo& info, size_t i) { return UintArg(info, i, "version"); }

// The result of a lookup for JS: the length (bytes copied into the buffer when they fit; else
// the caller grows it and asks again), -1 for a miss, -2 for a deleted object, -3 for an object
// whose copy the caller holds (`held`); meta[0] is the version when found or deleted, meta[1]
// (when there) the stamp when found.
double Lookup(uint32_t type, std::string_view id, ByteView buf, DoubleView meta, HeldStamps held) {
  size_t len = 0;
  uint64_t version = 0;
  bool stamped = meta.length >= 2;
  uint64_t stamp = 0;
  CacheLookup found = ProcessObjectCache().Get(type, id, buf.data, buf.length, &len, &version,
                                               stamped || held.slots != nullptr ? &stamp : nullptr, held);
  if (found == CacheLookup::kFound) {
    meta.data[0] = static_cast<double>(version);
    if (stamped) meta.data[1] = static_cast<double>(stamp);
    return held.Holds(stamp) ? -3 : static_cast<double>(len);
  }
  if (found == CacheLookup::kDeleted) {
    meta.data[0] = static_cast<double>(version);
    return -2;
  }
  return -1;
}

DoubleView MetaArg(const Napi::CallbackInfo& info, size_t i) {
  DoubleView meta = Float64Arg(info, i, "meta");
  if (meta.length < 1) throw ArgumentError("meta must hold at least one number");
  return meta;
}

// `held`: a Float64Array of a power of two slots, the stamps of the copies the caller decoded,
// each in slot stamp % length (HeldStamps); null or undefined for none.
HeldStamps HeldArg(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || info[i].IsUndefined() || info[i].IsNull()) return {};
  DoubleView slots = Float64Arg(info, i, "held");
  if (slots.length == 0 || (slots.length & (slots.length - 1)) != 0) throw ArgumentError("held must hold a power of two slots");
  return HeldStamps{slots.data, slots.length - 1};
}

Napi::Value Number(napi_env env, double value) {
  napi_value out;
  napi_create_double(env, value, &out);
  return Napi::Value(env, out);
}

// The arrays a thread's lookups use (objCacheBind), so that objCacheLookup takes only the type
// and the id: each typed array passed to a call costs more than the lookup's hash table. The
// references keep them alive; their data never moves (they are not resizable, and not
// transferred).
struct BoundArrays {
  napi_env env = nullptr;
  napi_ref refs[3] = {nullptr, nullptr, nullptr};
  ByteView buf;
  DoubleView meta;
  HeldStamps held;
};

thread_local BoundArrays bound;

// objCacheBind(buffer, meta, held?): the arrays of this thread's objCacheLookup calls, in
// place of any bound before (a grown buffer is bound again).
Napi::Value CacheBind(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  BoundArrays next;
  next.env = env;
  next.buf = BytesArg(info, 0, "buffer", false);
  next.meta = MetaArg(info, 1);
  next.held = HeldArg(info, 2);
  size_t count = next.held.slots != nullptr ? 3 : 2;
  for (size_t i = 0; i < count; ++i) napi_create_reference(env, info[i], 1, &next.refs[i]);
  if (bound.env == env) {
    for (napi_ref ref : bound.refs) {
      if (ref != nullptr) napi_delete_reference(env, ref);
    }
  } else {
    // The first bind of this environment: when it ends (a worker that stops), its references
    // go with it, and this thread's next environment starts unbound.
    napi_add_env_cleanup_hook(env, [](void*) { bound = BoundArrays{}; }, nullptr);
  }
  bound = next;
  return info.Env().Undefined();
}

// objCacheLookup(type, id): a lookup with the arrays this thread bound (see Lookup).
Napi::Value CacheLookupBound(const Napi::CallbackInfo& info) {
  if (bound.env != info.Env()) throw StateError("objCacheLookup: this thread bound no arrays (objCacheBind)");
  uint32_t type = TypeArg(info, 0);
  Utf8Arg id(info, 1, "id");
  return Number(info.Env(), Lookup(type, id.view(), bound.buf, bound.meta, bound.held));
}

Napi::Value CachePut(const Napi::CallbackInfo& info) {
  uint32_t type = TypeArg(info, 0);
  Utf8Arg id(info, 1, "id");
  uint64_t version = VersionArg(info, 2);
  ByteView bytes = BytesArg(info, 3, "bytes", false);
  bool stored = ProcessObjectCache().Put(type, id.view(), version,
                                         std::string_view(reinterpret_cast<const char*>(bytes.data), bytes.length));
  return Napi::Boolean::New(info.Env(), stored);
}

Napi::Value CachePutDeleted(const Napi::CallbackInfo& info) {
  uint32_t type = TypeArg(info, 0);
  Utf8Arg id(info, 1, "id");
  return Napi::Boolean::New(info.Env(), ProcessObjectCache().PutDeleted(type, id.view(), VersionArg(info, 2)));
}

Napi::Value CacheInvalidate(const Napi::CallbackInfo& info) {
  uint32_t type = TypeArg(info, 0);
  Utf8Arg id(info, 1, "id");
  return Napi::Boolean::New(info.Env(), ProcessObjectCache().Invalidate(type, id.view(), VersionArg(info, 2)));
}

Napi::Value CachePutKey(const Napi::CallbackInfo& info) {
  uint32_t type = TypeArg(info, 0);
  uint32_t field = IdArg(info, 1, "field");
  Utf8Arg value(info, 2, "value");
  Utf8Arg id(info, 3, "id");
  ProcessObjectCache().PutKey(type, field, value.view(), id.view());
  return info.Env().Undefined();
}

Napi::Value CacheGetKey(const Napi::CallbackInfo& info) {
  uint32_t type = TypeArg(info, 0);
  uint32_t field = IdArg(info, 1, "field");
  Utf8Arg value(info, 2, "value");
  std::string id;
  if (!ProcessObjectCache().GetKey(type, field, value.view(), &id)) return info.Env().Null();
  return Napi::String::New(info.Env(), id);
}

Napi::Value CacheConfigure(const Napi::CallbackInfo& info) {
  ProcessObjectCache().SetCapacity(static_cast<size_t>(UintArg(info, 0, "capacityBytes")));
  return info.Env().Undefined();
}

Napi::Value CacheClear(const Napi::CallbackInfo& info) {
  ProcessObjectCache().Clear();
  return info.Env().Undefined();
}

Napi::Value CacheStats(const Napi::CallbackInfo& info) {
  ObjectCacheStats st = ProcessObjectCache().Stats();
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("objects", static_cast<double>(st.objects));
  o.Set("tombstones", static_cast<double>(st.tombstones));
  o.Set("keys", static_cast<double>(st.keys));
  o.Set("bytes", static_cast<double>(st.bytes));
  o.Set("capacity", static_cast<double>(st.capacity));
  o.Set("hits", static_cast<double>(st.hits));
  o.Set("misses", static_cast<double>(st.misses));
  o.Set("evictions", static_cast<double>(st.evictions));
  return o;
}

Napi::Value CacheCountsByType(const Napi::CallbackInfo& info) {
  std::vector<uint64_t> counts = ProcessObjectCache().CountsByType();
  Napi::Array out = Napi::Array::New(info.Env(), counts.size());
  for (size_t i = 0; i < counts.size(); ++i) out.Set(static_cast<uint32_t>(i), static_cast<double>(counts[i]));
  return out;
}

Napi::Value ObjectConfigSet(const Napi::CallbackInfo& info) {
  Utf8Arg json(info, 0, "json");
  ProcessObjectConfig().Set(json.str());
  return info.Env().Undefined();
}

Napi::Value ObjectConfigGet(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), ProcessObjectConfig().Get());
}

Napi::Value ObjectConfigVersion(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ProcessObjectConfig().Version()));
}

}  // namespace

void ObjectCacheBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<CacheBind>(env, exports, "objCacheBind");
  Export<CacheLookupBound>(env, exports, "objCacheLookup");
  Export<CachePut>(env, exports, "objCachePut");
  Export<CachePutDeleted>(env, exports, "objCachePutDeleted");
  Export<CacheInvalidate>(env, exports, "objCacheInvalidate");
  Export<CachePutKey>(env, exports, "objCachePutKey");
  Export<CacheGetKey>(env, exports, "objCacheGetKey");
  Export<CacheConfigure>(env, exports, "objCacheConfigure");
  Export<CacheClear>(env, exports, "objCacheClear");
  Export<CacheStats>(env, exports, "objCacheStats");
  Export<CacheCountsByType>(env, exports, "objCacheCountsByType");
  Export<ObjectConfigSet>(env, exports, "objConfigSet");
  Export<ObjectConfigGet>(env, exports, "objConfigGet");
  Export<ObjectConfigVersion>(env, exports, "objConfigVersion");
}

}  // namespace gsf::binding
