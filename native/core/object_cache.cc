#include "object_cache.h"

#include <cstring>
#include <functional>

namespace gsf {

namespace {

constexpr uint8_t kObject = 0;
constexpr uint8_t kTombstone = 1;
constexpr uint8_t kKey = 2;
// Charged per entry besides its key and bytes: the entry (128 bytes, see Entry) and its bucket.
constexpr size_t kOverhead = 136;

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

// What a lookup reads comes first, in one cache line: the hash, the bucket chain, the key (a
// short one inline), the version and the stamp. A hit on a copy the caller holds reads no other.
struct alignas(64) ObjectCache::Entry {
  size_t hash = 0;
  Entry* chain = nullptr;  // the next entry of the same bucket
  std::string key;
  uint64_t version = 0;
  uint64_t stamp = 0;
  std::string bytes;
  uint32_t type = 0;
  uint8_t kind = kObject;
  size_t charge = 0;
  Entry* prev = nullptr;  // towards the most recently used
  Entry* next = nullptr;  // towards the least recently used
};

/**
 * The entries of a shard by key: a chained hash table threaded through the entries themselves.
 * A lookup reads the bucket, then only the entries it compares (a std::unordered_map reads its
 * node and the node before it too: two more cache misses per lookup in a large cache).
 */
class ObjectCache::Index {
 public:
  Entry* Find(std::string_view key, size_t hash) const {
    if (buckets_.empty()) return nullptr;
    for (Entry* e = buckets_[hash & (buckets_.size() - 1)]; e != nullptr; e = e->chain) {
      if (e->hash == hash && std::string_view(e->key) == key) return e;
    }
    return nullptr;
  }

  void Insert(Entry* e) {
    if (count_ >= buckets_.size()) Grow();
    Entry*& head = buckets_[e->hash & (buckets_.size() - 1)];
    e->chain = head;
    head = e;
    ++count_;
  }

  void Erase(Entry* e) {
    for (Entry** at = &buckets_[e->hash & (buckets_.size() - 1)]; *at != nullptr; at = &(*at)->chain) {
      if (*at == e) {
        *at = e->chain;
        e->chain = nullptr;
        --count_;
        return;
      }
    }
  }

 private:
  // At most one entry per bucket on average; the table doubles, and never shrinks.
  void Grow() {
    std::vector<Entry*> old = std::move(buckets_);
    buckets_.assign(old.empty() ? 64 : old.size() * 2, nullptr);
    for (Entry* e : old) {
      while (e != nullptr) {
        Entry* next = e->chain;
        Entry*& head = buckets_[e->hash & (buckets_.size() - 1)];
        e->chain = head;
        head = e;
        e = next;
      }
    }
  }

  std::vector<Entry*> buckets_;
  size_t count_ = 0;
};

struct ObjectCache::Shard {
  std::mutex mu;
  Index map;
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

ObjectCache::Shard& ObjectCache::ShardOf(std::string_view key, size_t* hash) {
  // One hash for both: the shard takes high bits, the shard's buckets the low ones.
  size_t h = std::hash<std::string_view>{}(key);
  *hash = h;
  return shards_[(h >> 56) % kShards];
}

void ObjectCache::SetCapacity(size_t capacity_bytes) {
  shard_capacity_.store(capacity_bytes / kShards, std::memory_order_relaxed);
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard<std::mutex> lock(shards_[i].mu);
    EvictLocked(shards_[i]);
  }
}

void ObjectCache::EraseLocked(Shard& s, Entry* e) {
  s.map.Erase(e);
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

void ObjectCache::StoreLocked(Shard& s, std::string&& key, size_t hash, uint32_t type, uint8_t kind, uint64_t version,
                              std::string_view bytes) {
  auto* e = new Entry();
  e->hash = hash;
  e->key = std::move(key);
  e->bytes.assign(bytes.data(), bytes.size());
  e->version = version;
  e->stamp = next_stamp_.fetch_add(1, std::memory_order_relaxed);
  e->type = type;
  e->kind = kind;
  e->charge = e->key.size() + e->bytes.size() + kOverhead;
  s.map.Insert(e);
  static_assert(sizeof(Entry) + sizeof(Entry*) <= kOverhead, "kOverhead charges the entry and its bucket");
  s.PushFront(e);
  s.bytes += e->charge;
  s.Count(e, 1);
  EvictLocked(s);
}

CacheLookup ObjectCache::Get(uint32_t type, std::string_view id, uint8_t* buf, size_t cap, size_t* len,
                             uint64_t* version, uint64_t* stamp, HeldStamps held) {
  std::string_view key = ObjectKey(type, id);
  size_t hash;
  Shard& s = ShardOf(key, &hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Entry* e = s.map.Find(key, hash);
  if (e == nullptr) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return CacheLookup::kMiss;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  s.Touch(e);
  *version = e->version;
  if (e->kind == kTombstone) return CacheLookup::kDeleted;
  *len = e->bytes.size();
  if (stamp != nullptr) {
    *stamp = e->stamp;
    if (held.Holds(e->stamp)) return CacheLookup::kFound;
  }
  if (e->bytes.size() <= cap && !e->bytes.empty()) std::memcpy(buf, e->bytes.data(), e->bytes.size());
  return CacheLookup::kFound;
}

CacheLookup ObjectCache::Get(uint32_t type, std::string_view id, std::string* bytes, uint64_t* version) {
  std::string_view key = ObjectKey(type, id);
  size_t hash;
  Shard& s = ShardOf(key, &hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Entry* e = s.map.Find(key, hash);
  if (e == nullptr) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return CacheLookup::kMiss;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  s.Touch(e);
  *version = e->version;
  if (e->kind == kTombstone) return CacheLookup::kDeleted;
  *bytes = e->bytes;
  return CacheLookup::kFound;
}

bool ObjectCache::Put(uint32_t type, std::string_view id, uint64_t version, std::string_view bytes) {
  std::string_view key = ObjectKey(type, id);
  size_t hash;
  Shard& s = ShardOf(key, &hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Entry* found = s.map.Find(key, hash);
  if (found != nullptr) {
    if (found->version >= version) return false;
    EraseLocked(s, found);
  }
  StoreLocked(s, std::string(key), hash, type, kObject, version, bytes);
  return true;
}

bool ObjectCache::PutDeleted(uint32_t type, std::string_view id, uint64_t version) {
  std::string_view key = ObjectKey(type, id);
  size_t hash;
  Shard& s = ShardOf(key, &hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Entry* found = s.map.Find(key, hash);
  if (found != nullptr) {
    if (found->version >= version) return false;
    EraseLocked(s, found);
  }
  StoreLocked(s, std::string(key), hash, type, kTombstone, version, {});
  return true;
}

bool ObjectCache::Invalidate(uint32_t type, std::string_view id, uint64_t up_to) {
  std::string_view key = ObjectKey(type, id);
  size_t hash;
  Shard& s = ShardOf(key, &hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Entry* found = s.map.Find(key, hash);
  if (found == nullptr || found->version > up_to) return false;
  EraseLocked(s, found);
  return true;
}

void ObjectCache::PutKey(uint32_t type, uint32_t field, std::string_view value, std::string_view id) {
  std::string_view key = UniqueKey(type, field, value);
  size_t hash;
  Shard& s = ShardOf(key, &hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Entry* found = s.map.Find(key, hash);
  if (found != nullptr) {
    if (found->bytes == id) {
      s.Touch(found);
      return;
    }
    EraseLocked(s, found);
  }
  StoreLocked(s, std::string(key), hash, type, kKey, 0, id);
}

bool ObjectCache::GetKey(uint32_t type, uint32_t field, std::string_view value, std::string* id) {
  std::string_view key = UniqueKey(type, field, value);
  size_t hash;
  Shard& s = ShardOf(key, &hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Entry* found = s.map.Find(key, hash);
  if (found == nullptr) return false;
  s.Touch(found);
  *id = found->bytes;
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
