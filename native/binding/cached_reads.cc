#include "cached_reads.h"

#include <cmath>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../core/object_cache.h"
#include "../core/plugin_api.h"
#include "../core/plugin_results.h"
#include "../include/gsf_msgpack.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

// One declared type as this thread's object store knows it (src/objects/thread-store.ts).
struct ReadType {
  std::string name;
  uint32_t index = 0;
  std::vector<std::string> fields;
  struct Key {
    std::string field;
    uint32_t unique;
    bool integer;
  };
  std::vector<Key> keys;
};

struct ReadTable {
  // The object-store settings version the types were read from; none until registered.
  uint64_t config_version = UINT64_MAX;
  std::vector<ReadType> types;
};

ReadTable& Table() {
  thread_local ReadTable table;
  return table;
}

// The table the last store registered on any thread (objReadTypes), guarded by its mutex: a
// thread whose JavaScript has not touched objects yet (a native plugin's first call there)
// takes a copy, so object_read_cached answers from the cache on every thread.
struct PublishedTable {
  std::mutex mu;
  ReadTable table;
};

PublishedTable& Published() {
  // Never destroyed: worker threads may still read it while the process exits.
  static PublishedTable* published = new PublishedTable;
  return *published;
}

// This thread's table for the current object-store settings, copied from the published one
// when this thread's own is missing or stale; null when no store has registered its types.
const ReadTable* CurrentTable() {
  ReadTable& table = Table();
  const uint64_t version = ProcessObjectConfig().Version();
  if (!table.types.empty() && table.config_version == version) return &table;
  PublishedTable& published = Published();
  std::lock_guard<std::mutex> lock(published.mu);
  if (published.table.types.empty() || published.table.config_version != version) return nullptr;
  table = published.table;
  return &table;
}

std::string_view Str(const gsf_type_borrowed_str& s) { return std::string_view(s.ptr ? s.ptr : "", s.len); }

const ReadType* FindType(std::string_view name) {
  for (const ReadType& t : Table().types) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const ReadType::Key* FindKey(const ReadType& t, std::string_view field) {
  for (const ReadType::Key& k : t.keys) {
    if (k.field == field) return &k;
  }
  return nullptr;
}

bool Declared(const ReadType& t, std::string_view field) {
  for (const std::string& f : t.fields) {
    if (f == field) return true;
  }
  return false;
}

// The key of a fetch_by as the cache's key index holds it (JavaScript's String(value)): a
// string for a string key, the decimal form of a safe integer for an integer key.
bool KeyText(const ReadType::Key& key, std::string_view bytes, std::string* out, int64_t* number) {
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, bytes.data(), bytes.size());
  if (key.integer) {
    if (gsf_mp_next_type(&r) != GSF_MP_INT || !gsf_mp_read_int(&r, number) || !gsf_mp_at_end(&r)) return false;
    if (*number > 9007199254740991LL || *number < -9007199254740991LL) return false;
    *out = std::to_string(*number);
    return true;
  }
  gsf_type_borrowed_str s;
  if (!gsf_mp_read_str(&r, &s) || !gsf_mp_at_end(&r)) return false;
  out->assign(Str(s));
  return true;
}

// Whether the cached object still holds the key (the key index is a hint, as in transaction.ts).
bool Holds(std::string_view object, const ReadType::Key& key, std::string_view text, int64_t number) {
  gsf_mp_reader r, v;
  gsf_mp_reader_init(&r, object.data(), object.size());
  if (!gsf_mp_map_find(&r, key.field.c_str(), &v)) return false;
  if (key.integer) {
    int64_t n;
    return gsf_mp_next_type(&v) == GSF_MP_INT && gsf_mp_read_int(&v, &n) && n == number;
  }
  gsf_type_borrowed_str s;
  return gsf_mp_read_str(&v, &s) && Str(s) == text;
}

// The fields as a native handler gets them, `{id, ...fields}`, when the cached map holds
// exactly the declared fields (one stored before a field was added gets its default from
// JavaScript instead).
bool Fields(const ReadType& t, std::string_view id, std::string_view object, std::string* out) {
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, object.data(), object.size());
  uint32_t n;
  if (!gsf_mp_read_map(&r, &n) || n != t.fields.size()) return false;
  const uint8_t* body = r.p;
  for (uint32_t i = 0; i < n; ++i) {
    gsf_type_borrowed_str k;
    if (!gsf_mp_read_str(&r, &k) || !Declared(t, Str(k)) || !gsf_mp_skip(&r)) return false;
  }
  if (!gsf_mp_at_end(&r)) return false;
  gsf_mp_writer w;
  gsf_mp_writer_init(&w);
  gsf_mp_write_map(&w, n + 1);
  gsf_mp_write_cstr(&w, "id");
  gsf_mp_write_str(&w, id.data(), id.size());
  gsf_mp_write_raw(&w, gsf_bytes(body, static_cast<size_t>(r.end - body)));
  bool ok = gsf_mp_writer_ok(&w);
  if (ok) {
    gsf_type_borrowed_bytes b = gsf_mp_writer_bytes(&w);
    out->assign(reinterpret_cast<const char*>(b.ptr), b.len);
  }
  gsf_mp_writer_free(&w);
  return ok;
}

bool ValidId(std::string_view id) {
  return !id.empty() && id.size() <= 255 && id.find('\0') == std::string_view::npos;
}

}  // namespace

bool LookupCached(const Effect& e, CachedAnswer* out) {
  if (e.level != GSF_OBJECT_READ && e.level != GSF_OBJECT_WRITE) return false;
  if (CurrentTable() == nullptr) return false;
  const ReadType* t = FindType(e.a);
  if (t == nullptr) return false;
  ObjectCache& cache = ProcessObjectCache();
  const ReadType::Key* key = nullptr;
  std::string text;
  int64_t number = 0;
  if (e.code == kObjectFetchBy) {
    key = FindKey(*t, e.b);
    if (key == nullptr || !KeyText(*key, e.c, &text, &number) || !cache.GetKey(t->index, key->unique, text, &out->id)) return false;
  } else {
    out->id = e.b;
  }
  if (!ValidId(out->id)) return false;
  uint64_t version;
  CacheLookup found = cache.Get(t->index, out->id, &out->stored, &version);
  if (found == CacheLookup::kMiss) return false;
  if (found == CacheLookup::kDeleted) {
    // A key entry whose object was deleted is a stale hint: the database tells.
    if (key != nullptr) return false;
    out->found = false;
    return true;
  }
  if (key != nullptr && !Holds(out->stored, *key, text, number)) return false;
  out->found = true;
  out->version = version;
  return Fields(*t, out->id, out->stored, &out->fields);
}

namespace {

// Types of this thread's object store: [[name, index, [field…], [[keyField, uniqueIndex, isInteger]…]]…]
// as msgpack, read from settings version `version` (null bytes: none).
Napi::Value ObjReadTypes(const Napi::CallbackInfo& info) {
  ByteView bytes = BytesArg(info, 0, "types", true);
  double version = NumberArg(info, 1, "configVersion");
  ReadTable& table = Table();
  table.types.clear();
  table.config_version = UINT64_MAX;
  if (bytes.data == nullptr) return info.Env().Undefined();
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, bytes.data, bytes.length);
  uint32_t n;
  bool ok = gsf_mp_read_array(&r, &n);
  for (uint32_t i = 0; ok && i < n; ++i) {
    ReadType t;
    uint32_t parts, nf, nk;
    gsf_type_borrowed_str s;
    int64_t index;
    ok = gsf_mp_read_array(&r, &parts) && parts == 4 && gsf_mp_read_str(&r, &s) && gsf_mp_read_int(&r, &index) && index >= 0 &&
         gsf_mp_read_array(&r, &nf);
    if (!ok) break;
    t.name.assign(Str(s));
    t.index = static_cast<uint32_t>(index);
    for (uint32_t f = 0; ok && f < nf; ++f) {
      ok = gsf_mp_read_str(&r, &s);
      if (ok) t.fields.emplace_back(Str(s));
    }
    ok = ok && gsf_mp_read_array(&r, &nk);
    for (uint32_t k = 0; ok && k < nk; ++k) {
      uint32_t three;
      int64_t unique;
      int integer;
      ok = gsf_mp_read_array(&r, &three) && three == 3 && gsf_mp_read_str(&r, &s) && gsf_mp_read_int(&r, &unique) && unique >= 0 &&
           gsf_mp_read_bool(&r, &integer);
      if (ok) t.keys.push_back(ReadType::Key{std::string(Str(s)), static_cast<uint32_t>(unique), integer != 0});
    }
    // A declared field named like the id would shadow it: such a type is always read in JavaScript.
    if (ok && !Declared(t, "id")) table.types.push_back(std::move(t));
  }
  if (!ok || !gsf_mp_at_end(&r)) {
    table.types.clear();
    throw ArgumentError("types must be msgpack [[name, index, [field...], [[field, unique, integer]...]]...]");
  }
  table.config_version = static_cast<uint64_t>(version);
  PublishedTable& published = Published();
  std::lock_guard<std::mutex> lock(published.mu);
  published.table = table;
  return info.Env().Undefined();
}

// object_read_cached (ABI 1.2): this thread's cache copy of an object, as plugin_results.h says.
int ReadCachedObject(std::string_view type, std::string_view id, std::string* fields) {
  if (CurrentTable() == nullptr) return 2;
  const ReadType* t = FindType(type);
  if (t == nullptr) return 3;
  if (!ValidId(id)) return 1;  // no object can have it (as fetchCached's storableId)
  std::string object;
  uint64_t version;
  CacheLookup found = ProcessObjectCache().Get(t->index, std::string(id), &object, &version);
  if (found == CacheLookup::kMiss) return 2;
  if (found == CacheLookup::kDeleted) return 1;
  return Fields(*t, id, object, fields) ? 0 : 2;
}

}  // namespace

void CachedReadsBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<ObjReadTypes>(env, exports, "objReadTypes");
  SetCachedObjectReader(ReadCachedObject);
}

}  // namespace gsf::binding
