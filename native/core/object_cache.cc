#include "object_cache.h"

#include <cstring>
#include <functional>

namespace gsf {

namespace {

constexpr uint8_t kObject = 0;
constexpr uint8_t kTombstone = 1;
constexpr uint8_t kKey = 2;
// Charged per entry besides its key and bytes: the entry, its map node and bucket.
constexpr size_t kOverhead = 96;

// Keys: 4 bytes of type, one namespace byte (0 object id, 1 unique key), then the id, or
// 4 bytes of field and the value. Built in a per-thread buffer, so lookups do not allocate.
std::string_view ObjectKey(uint32_t type, std::string_view id) {
  thread_local std::string key;
  key.resize(5 + id.size());
  std::memcpy(key.data(), &type, 4);
  key[4] = 0;
  std::memcpy(key.data() + 5, id.data(), id.size());
  return key;
}

std::string_view UniqueKey(uint32_t type, uint32_t field, std::string_view value) {
  thread_local std::string key;
  key.resize(9 + value.size());
  std::memcpy(key.data(), &type, 4);
  key[4] = 1;
  std::memcpy(key.data() + 5, &field, 4);
  std::memcpy(key.data() + 9, value.data(), value.size());
  return key;
}

}  // namespace

struct ObjectCache::Entry {
  std::string key;
  std::string bytes;
  uint64_t version = 0;
  uint64_t stamp = 0;
  uint32_t type = 0;
  uint8_t kind = kObject;
  size_t charge = 0;
  Entry* prev = nullptr;  // towards the most recently used
  Entry* next = nullptr;  // towards the least recently used
};

struct ObjectCache::Shard {
  std::mutex mu;
  std::unordered_map<std::string_view, Entry*> map;
  Entry* head = nullptr;  // most recently used
  Entry* tail = nullptr;  // least recently used
  size_t bytes = 0;
  uint64_t objects = 0, tombstones = 0, keys = 0;
  std::vector<uint64_t> per_type;

  void Unlink(Entry* e) {
    (e->prev ? e->prev->next : head) = e->next;
    (e->next ? e->next->prev : tail) = e->prev;
    e->prev = e->next = nullptr;
  }
  void PushFront(Entry* e) {
    e->prev = nullptr;
    e->next = head;
    if (head) head->prev = e;
    head = e;
    if (!tail) tail = e;
  }
  void Touch(Entry* e) {
    if (head == e) return;
    Unlink(e);
    PushFront(e);
  }
  void Count(const Entry* e, int64_t delta) {
    if (e->kind == kObject) {
      objects += delta;
      if (per_type.size() <= e->type) per_type.resize(e->type + 1, 0);
      per_type[e->type] += delta;
    } else if (e->kind == kTombstone) {
      tombstones += delta;
    } else {
      keys += delta;
    }
  }
};

ObjectCache::ObjectCache(size_t capacity_bytes)
    : shards_(new Shard[kShards]), shard_capacity_(capacity_bytes / kShards) {}

ObjectCache::~ObjectCache() { Clear(); }

ObjectCache::Shard& ObjectCache::ShardOf(std::string_view key) {
  // The map hashes the same key again; the shard uses the high bits so the two spread independently.
  size_t h = std::hash<std::string_view>{}(key);
  return shards_[(h >> 24) % kShards];
}

void ObjectCache::SetCapacity(size_t capacity_bytes) {
  shard_capacity_.store(capacity_bytes / kShards, std::memory_order_relaxed);
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard<std::mutex> lock(shards_[i].mu);
    EvictLocked(shards_[i]);
  }
}

void ObjectCache::EraseLocked(Shard& s, Entry* e) {
  s.map.erase(std::string_view(e->key));
  s.Unlink(e);
  s.bytes -= e->charge;
  s.Count(e, -1);
  delete e;
}

void ObjectCache::EvictLocked(Shard& s) {
  size_t cap = shard_capacity_.load(std::memory_order_relaxed);
  while (s.bytes > cap && s.tail) {
    EraseLocked(s, s.tail);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
}

void ObjectCache::StoreLocked(Shard& s, std::string&& key, uint32_t type, uint8_t kind, uint64_t version,
                              std::string_view bytes) {
  auto* e = new Entry();
  e->key = std::move(key);
  e->bytes.assign(bytes.data(), bytes.size());
  e->version = version;
  e->stamp = next_stamp_.fetch_add(1, std::memory_order_relaxed);
  e->type = type;
  e->kind = kind;
  e->charge = e->key.size() + e->bytes.size() + kOverhead;
  s.map.emplace(std::string_view(e->key), e);
  s.PushFront(e);
  s.bytes += e->charge;
  s.Count(e, 1);
  EvictLocked(s);
}

CacheLookup ObjectCache::Get(uint32_t type, std::string_view id, uint8_t* buf, size_t cap, size_t* len,
                             uint64_t* version, uint64_t* stamp, uint64_t known_stamp) {
  std::string_view key = ObjectKey(type, id);
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return CacheLookup::kMiss;
  }
  Entry* e = it->second;
  hits_.fetch_add(1, std::memory_order_relaxed);
  s.Touch(e);
  *version = e->version;
  if (e->kind == kTombstone) return CacheLookup::kDeleted;
  *len = e->bytes.size();
  if (stamp != nullptr) {
    *stamp = e->stamp;
    if (known_stamp != 0 && e->stamp == known_stamp) return CacheLookup::kFound;
  }
  if (e->bytes.size() <= cap && !e->bytes.empty()) std::memcpy(buf, e->bytes.data(), e->bytes.size());
  return CacheLookup::kFound;
}

CacheLookup ObjectCache::Get(uint32_t type, std::string_view id, std::string* bytes, uint64_t* version) {
  std::string_view key = ObjectKey(type, id);
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return CacheLookup::kMiss;
  }
  Entry* e = it->second;
  hits_.fetch_add(1, std::memory_order_relaxed);
  s.Touch(e);
  *version = e->version;
  if (e->kind == kTombstone) return CacheLookup::kDeleted;
  *bytes = e->bytes;
  return CacheLookup::kFound;
}

bool ObjectCache::Put(uint32_t type, std::string_view id, uint64_t version, std::string_view bytes) {
  std::string_view key = ObjectKey(type, id);
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(key);
  if (it != s.map.end()) {
    if (it->second->version >= version) return false;
    EraseLocked(s, it->second);
  }
  StoreLocked(s, std::string(key), type, kObject, version, bytes);
  return true;
}

bool ObjectCache::PutDeleted(uint32_t type, std::string_view id, uint64_t version) {
  std::string_view key = ObjectKey(type, id);
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(key);
  if (it != s.map.end()) {
    if (it->second->version >= version) return false;
    EraseLocked(s, it->second);
  }
  StoreLocked(s, std::string(key), type, kTombstone, version, {});
  return true;
}

bool ObjectCache::Invalidate(uint32_t type, std::string_view id, uint64_t up_to) {
  std::string_view key = ObjectKey(type, id);
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end() || it->second->version > up_to) return false;
  EraseLocked(s, it->second);
  return true;
}

void ObjectCache::PutKey(uint32_t type, uint32_t field, std::string_view value, std::string_view id) {
  std::string_view key = UniqueKey(type, field, value);
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(key);
  if (it != s.map.end()) {
    if (it->second->bytes == id) {
      s.Touch(it->second);
      return;
    }
    EraseLocked(s, it->second);
  }
  StoreLocked(s, std::string(key), type, kKey, 0, id);
}

bool ObjectCache::GetKey(uint32_t type, uint32_t field, std::string_view value, std::string* id) {
  std::string_view key = UniqueKey(type, field, value);
  Shard& s = ShardOf(key);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end()) return false;
  s.Touch(it->second);
  *id = it->second->bytes;
  return true;
}

void ObjectCache::Clear() {
  for (size_t i = 0; i < kShards; ++i) {
    Shard& s = shards_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    while (s.tail) EraseLocked(s, s.tail);
  }
}

ObjectCacheStats ObjectCache::Stats() const {
  ObjectCacheStats st;
  for (size_t i = 0; i < kShards; ++i) {
    Shard& s = shards_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    st.objects += s.objects;
    st.tombstones += s.tombstones;
    st.keys += s.keys;
    st.bytes += s.bytes;
  }
  st.capacity = shard_capacity_.load(std::memory_order_relaxed) * kShards;
  st.hits = hits_.load(std::memory_order_relaxed);
  st.misses = misses_.load(std::memory_order_relaxed);
  st.evictions = evictions_.load(std::memory_order_relaxed);
  return st;
}

std::vector<uint64_t> ObjectCache::CountsByType() const {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < kShards; ++i) {
    Shard& s = shards_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    if (out.size() < s.per_type.size()) out.resize(s.per_type.size(), 0);
    for (size_t t = 0; t < s.per_type.size(); ++t) out[t] += s.per_type[t];
  }
  while (!out.empty() && out.back() == 0) out.pop_back();
  return out;
}

ObjectCache& ProcessObjectCache() {
  static ObjectCache* cache = new ObjectCache();
  return *cache;
}

ConfigBlob& ProcessObjectConfig() {
  static ConfigBlob* blob = new ConfigBlob();
  return *blob;
}

}  // namespace gsf
