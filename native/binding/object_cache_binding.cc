// The object cache and the object store's published configuration.
#include "../core/object_cache.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

uint32_t TypeArg(const Napi::CallbackInfo& info, size_t i) { return IdArg(info, i, "type"); }

uint64_t VersionArg(const Napi::CallbackInfo& info, size_t i) { return UintArg(info, i, "version"); }

// Returns the length (bytes copied into `buf` when they fit; else the caller grows it and asks
// again), -1 for a miss, -2 for a deleted object; meta[0] is the version when found or deleted.
Napi::Value CacheGet(const Napi::CallbackInfo& info) {
  uint32_t type = TypeArg(info, 0);
  Utf8Arg id(info, 1, "id");
  ByteView buf = BytesArg(info, 2, "buffer", false);
  DoubleView meta = Float64Arg(info, 3, "meta");
  if (meta.length < 1) throw ArgumentError("meta must hold at least one number");
  size_t len = 0;
  uint64_t version = 0;
  // meta[1], when there: in, the stamp of a copy the caller holds; out, the entry's stamp.
  bool stamped = meta.length >= 2;
  uint64_t known = stamped ? static_cast<uint64_t>(meta.data[1]) : 0;
  uint64_t stamp = 0;
  CacheLookup found = ProcessObjectCache().Get(type, id.view(), buf.data, buf.length, &len, &version,
                                               stamped ? &stamp : nullptr, known);
  double result = -1;
  if (found == CacheLookup::kFound) {
    result = known != 0 && stamp == known ? -3 : static_cast<double>(len);
    meta.data[0] = static_cast<double>(version);
    if (stamped) meta.data[1] = static_cast<double>(stamp);
  } else if (found == CacheLookup::kDeleted) {
    result = -2;
    meta.data[0] = static_cast<double>(version);
  }
  napi_value out;
  napi_create_double(info.Env(), result, &out);
  return Napi::Value(info.Env(), out);
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
  Export<CacheGet>(env, exports, "objCacheGet");
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
