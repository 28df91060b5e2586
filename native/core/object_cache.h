// The process-wide cache of committed game objects, read by every event thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "config_blob.h"

namespace gsf {

/** What a lookup found. */
enum class CacheLookup : int { kMiss = 0, kFound = 1, kDeleted = 2 };

/**
 * The stamps of the copies a caller holds decoded (see ObjectCache::Get), one
 * per slot, a copy in slot `stamp % slots`: a table of a power of two slots the
 * caller owns. Stamps are handed out in sequence, so the slots hold the copies
 * of the most recently stored entries the caller read.
 */
struct HeldStamps {
  const double* slots = nullptr;
  size_t mask = 0;  // the number of slots - 1

  bool Holds(uint64_t stamp) const {
    return slots != nullptr && slots[stamp & mask] == static_cast<double>(stamp);
  }
};

/** Figures of the whole cache (all shards). */
struct ObjectCacheStats {
  uint64_t objects = 0;     // live object entries
  uint64_t tombstones = 0;  // deleted objects remembered
  uint64_t keys = 0;        // unique-key entries
  uint64_t bytes = 0;       // bytes charged (keys, data, overhead)
  uint64_t capacity = 0;
  uint64_t hits = 0;        // lookups answered (found or deleted)
  uint64_t misses = 0;
  uint64_t evictions = 0;
};

/**
 * Committed objects as opaque bytes (msgpack) with their version, keyed by
 * (type index, id), plus unique-key entries (type, field, value) -> id.
 *
 * Bounded in bytes, least recently used out first. Sharded by key hash, one
 * lock per shard, so event threads reading different objects rarely meet.
 * Entries are only replaced by newer versions: a thread filling the cache
 * from a database read cannot overwrite what the writer installed after it.
 * A deleted object leaves a tombstone (a version and no bytes) for the same
 * reason. Every method is safe to call from any thread.
 */
class ObjectCache {
 public:
  explicit ObjectCache(size_t capacity_bytes = 64u << 20);
  ~ObjectCache();
  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  /** Changes the byte budget; shrinking evicts at once. */
  void SetCapacity(size_t capacity_bytes);

  /**
   * Looks an object up. On kFound, copies its bytes into `buf` when they fit
   * in `cap` (always sets `*len`; a caller with a smaller buffer grows it and
   * asks again). On kFound and kDeleted sets `*version`. A hit makes the entry
   * most recently used.
   *
   * Each stored entry has a stamp, unique in the process: the same stamp means
   * the same bytes. When `stamp` is given it is set on kFound, and when `held`
   * holds the entry's stamp (a copy the caller decoded before) the bytes are
   * not copied.
   */
  CacheLookup Get(uint32_t type, std::string_view id, uint8_t* buf, size_t cap, size_t* len, uint64_t* version,
                  uint64_t* stamp = nullptr, HeldStamps held = {});

  /** Get into a string (tests, cold paths). */
  CacheLookup Get(uint32_t type, std::string_view id, std::string* bytes, uint64_t* version);

  /**
   * Stores an object unless the cache holds the same or a newer version of
   * it (or a tombstone at that version or newer). Returns whether it stored.
   */
  bool Put(uint32_t type, std::string_view id, uint64_t version, std::string_view bytes);

  /** Remembers that the object was deleted at `version` (same rule as Put). */
  bool PutDeleted(uint32_t type, std::string_view id, uint64_t version);

  /** Drops the entry if its version is <= `up_to` (a stale copy). Returns whether it dropped one. */
  bool Invalidate(uint32_t type, std::string_view id, uint64_t up_to);

  /** Remembers that unique key `field` = `value` of `type` belongs to object `id`. */
  void PutKey(uint32_t type, uint32_t field, std::string_view value, std::string_view id);

  /** The id remembered for a unique key, if any. */
  bool GetKey(uint32_t type, uint32_t field, std::string_view value, std::string* id);

  /** Drops every entry (statistics other than sizes stay). */
  void Clear();

  ObjectCacheStats Stats() const;

  /** Live object entries per type index (index i = type i; trailing zero types omitted). */
  std::vector<uint64_t> CountsByType() const;

 private:
  struct Entry;
  class Index;
  struct Shard;
  static constexpr size_t kShards = 16;

  Shard& ShardOf(std::string_view key, size_t* hash);
  void StoreLocked(Shard& s, std::string&& key, size_t hash, uint32_t type, uint8_t kind, uint64_t version, std::string_view bytes);
  void EvictLocked(Shard& s);
  void EraseLocked(Shard& s, Entry* e);

  std::unique_ptr<Shard[]> shards_;
  std::atomic<size_t> shard_capacity_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> evictions_{0};
  std::atomic<uint64_t> next_stamp_{1};
};

/** The process's object cache (created on first use, never destroyed). */
ObjectCache& ProcessObjectCache();

/**
 * The object store's settings and schema as JSON, published by the main
 * thread at start and read by event threads and the writer.
 */
ConfigBlob& ProcessObjectConfig();

}  // namespace gsf
