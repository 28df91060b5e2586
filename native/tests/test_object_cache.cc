#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../core/object_cache.h"
#include "check.h"

namespace object_cache_test {

using gsf::CacheLookup;
using gsf::HeldStamps;
using gsf::ObjectCache;

TEST(object_cache_put_get_and_versions) {
  ObjectCache c(1 << 20);
  std::string bytes;
  uint64_t version = 0;
  CHECK(c.Get(1, "a", &bytes, &version) == CacheLookup::kMiss);
  CHECK(c.Put(1, "a", 3, "three"));
  REQUIRE(c.Get(1, "a", &bytes, &version) == CacheLookup::kFound);
  CHECK_EQ(bytes, std::string("three"));
  CHECK_EQ(version, uint64_t{3});
  // Same or older versions never replace a newer one (a late fill from a database read).
  CHECK(!c.Put(1, "a", 3, "again"));
  CHECK(!c.Put(1, "a", 2, "older"));
  REQUIRE(c.Get(1, "a", &bytes, &version) == CacheLookup::kFound);
  CHECK_EQ(bytes, std::string("three"));
  CHECK(c.Put(1, "a", 4, "four"));
  REQUIRE(c.Get(1, "a", &bytes, &version) == CacheLookup::kFound);
  CHECK_EQ(bytes, std::string("four"));
  // The same id under another type is another object.
  CHECK(c.Get(2, "a", &bytes, &version) == CacheLookup::kMiss);
  auto st = c.Stats();
  CHECK_EQ(st.objects, uint64_t{1});
  CHECK_EQ(st.hits, uint64_t{3});
  CHECK_EQ(st.misses, uint64_t{2});
}

TEST(object_cache_get_into_small_buffer_reports_length) {
  ObjectCache c(1 << 20);
  c.Put(0, "id", 1, "0123456789");
  uint8_t buf[4];
  size_t len = 0;
  uint64_t version = 0;
  REQUIRE(c.Get(0, "id", buf, sizeof buf, &len, &version) == CacheLookup::kFound);
  CHECK_EQ(len, size_t{10});
  uint8_t big[16] = {};
  REQUIRE(c.Get(0, "id", big, sizeof big, &len, &version) == CacheLookup::kFound);
  CHECK_EQ(std::string(reinterpret_cast<char*>(big), len), std::string("0123456789"));
}

TEST(object_cache_stamps_name_stored_bytes) {
  ObjectCache c(1 << 20);
  c.Put(0, "id", 1, "first");
  uint8_t buf[16] = {};
  size_t len = 0;
  uint64_t version = 0, stamp = 0, again = 0;
  // The caller's table of held copies: 4 slots, a stamp in slot stamp % 4.
  double slots[4] = {0, 0, 0, 0};
  HeldStamps held{slots, 3};
  REQUIRE(c.Get(0, "id", buf, sizeof buf, &len, &version, &stamp, held) == CacheLookup::kFound);
  CHECK(stamp != 0);
  CHECK(!held.Holds(stamp));
  CHECK_EQ(std::string(reinterpret_cast<char*>(buf), len), std::string("first"));
  // The caller holds a copy of it now: the bytes are not copied again.
  slots[stamp & 3] = static_cast<double>(stamp);
  std::memset(buf, 0, sizeof buf);
  REQUIRE(c.Get(0, "id", buf, sizeof buf, &len, &version, &again, held) == CacheLookup::kFound);
  CHECK_EQ(again, stamp);
  CHECK_EQ(len, size_t{5});
  CHECK_EQ(buf[0], uint8_t{0});
  // A newer version is another stamp, and its bytes are copied.
  c.Put(0, "id", 2, "second");
  REQUIRE(c.Get(0, "id", buf, sizeof buf, &len, &version, &again, held) == CacheLookup::kFound);
  CHECK(again != stamp);
  CHECK(!held.Holds(again));
  CHECK_EQ(std::string(reinterpret_cast<char*>(buf), len), std::string("second"));
  // The same version stored again (after an eviction or invalidation) is a new stamp too.
  uint64_t second = again;
  slots[second & 3] = static_cast<double>(second);
  CHECK(c.Invalidate(0, "id", 2));
  c.Put(0, "id", 2, "second");
  std::memset(buf, 0, sizeof buf);
  REQUIRE(c.Get(0, "id", buf, sizeof buf, &len, &version, &again, held) == CacheLookup::kFound);
  CHECK(again != second);
  CHECK_EQ(std::string(reinterpret_cast<char*>(buf), len), std::string("second"));
  // Without a table every hit is copied.
  std::memset(buf, 0, sizeof buf);
  slots[again & 3] = static_cast<double>(again);
  REQUIRE(c.Get(0, "id", buf, sizeof buf, &len, &version, &stamp) == CacheLookup::kFound);
  CHECK_EQ(std::string(reinterpret_cast<char*>(buf), len), std::string("second"));
}

TEST(object_cache_finds_every_entry_as_its_shards_grow_and_shrink) {
  // The shards' own hash tables: grown past their first size, entries erased from the middle
  // of bucket chains by replacement, invalidation and eviction.
  ObjectCache c(64u << 20);
  for (int i = 0; i < 5000; ++i) REQUIRE(c.Put(2, "o" + std::to_string(i), 1, "v" + std::to_string(i)));
  for (int i = 0; i < 5000; i += 3) REQUIRE(c.Put(2, "o" + std::to_string(i), 2, "w" + std::to_string(i)));
  for (int i = 1; i < 5000; i += 3) REQUIRE(c.Invalidate(2, "o" + std::to_string(i), 1));
  std::string bytes;
  uint64_t version = 0;
  for (int i = 0; i < 5000; ++i) {
    CacheLookup found = c.Get(2, "o" + std::to_string(i), &bytes, &version);
    if (i % 3 == 1) {
      CHECK(found == CacheLookup::kMiss);
    } else {
      REQUIRE(found == CacheLookup::kFound);
      CHECK_EQ(bytes, (i % 3 == 0 ? "w" : "v") + std::to_string(i));
      CHECK_EQ(version, uint64_t(i % 3 == 0 ? 2 : 1));
    }
  }
  CHECK_EQ(c.Stats().objects, uint64_t{5000 - 1667});
  // Shrinking evicts the least recently used; what stays is still found, what went is a miss.
  c.SetCapacity(64 * 1024);
  uint64_t kept = c.Stats().objects;
  CHECK(kept > 0);
  CHECK(kept < 3333);
  uint64_t found = 0;
  for (int i = 0; i < 5000; ++i) found += c.Get(2, "o" + std::to_string(i), &bytes, &version) == CacheLookup::kFound;
  CHECK_EQ(found, kept);
  c.Clear();
  CHECK_EQ(c.Stats().objects, uint64_t{0});
  CHECK(c.Get(2, "o0", &bytes, &version) == CacheLookup::kMiss);
}

TEST(object_cache_tombstones_block_stale_fills) {
  ObjectCache c(1 << 20);
  c.Put(1, "x", 1, "v1");
  CHECK(c.PutDeleted(1, "x", 2));
  std::string bytes;
  uint64_t version = 0;
  CHECK(c.Get(1, "x", &bytes, &version) == CacheLookup::kDeleted);
  CHECK_EQ(version, uint64_t{2});
  CHECK(!c.Put(1, "x", 1, "v1 read before the delete"));
  CHECK(c.Get(1, "x", &bytes, &version) == CacheLookup::kDeleted);
  CHECK_EQ(c.Stats().tombstones, uint64_t{1});
  CHECK_EQ(c.Stats().objects, uint64_t{0});
  // Re-created under a newer version.
  CHECK(c.Put(1, "x", 3, "v3"));
  CHECK(c.Get(1, "x", &bytes, &version) == CacheLookup::kFound);
}

TEST(object_cache_invalidate_only_stale_versions) {
  ObjectCache c(1 << 20);
  c.Put(1, "x", 5, "v5");
  CHECK(!c.Invalidate(1, "x", 4));
  std::string bytes;
  uint64_t version = 0;
  CHECK(c.Get(1, "x", &bytes, &version) == CacheLookup::kFound);
  CHECK(c.Invalidate(1, "x", 5));
  CHECK(c.Get(1, "x", &bytes, &version) == CacheLookup::kMiss);
  CHECK(!c.Invalidate(1, "missing", 9));
}

TEST(object_cache_unique_keys) {
  ObjectCache c(1 << 20);
  std::string id;
  CHECK(!c.GetKey(1, 0, "ada", &id));
  c.PutKey(1, 0, "ada", "id-1");
  REQUIRE(c.GetKey(1, 0, "ada", &id));
  CHECK_EQ(id, std::string("id-1"));
  c.PutKey(1, 0, "ada", "id-2");
  REQUIRE(c.GetKey(1, 0, "ada", &id));
  CHECK_EQ(id, std::string("id-2"));
  CHECK(!c.GetKey(1, 1, "ada", &id));  // another field
  CHECK(!c.GetKey(2, 0, "ada", &id));  // another type
  // A key entry never shadows an object whose id looks like its key.
  std::string bytes;
  uint64_t version = 0;
  CHECK(c.Get(1, "ada", &bytes, &version) == CacheLookup::kMiss);
  CHECK_EQ(c.Stats().keys, uint64_t{1});
}

TEST(object_cache_evicts_least_recently_used_within_budget) {
  // 16 shards of 1 KiB: 16 KiB in all; each entry charges ~140 bytes + 400 of data.
  ObjectCache c(16 * 1024);
  std::string data(400, 'x');
  for (int i = 0; i < 200; ++i) c.Put(7, "obj" + std::to_string(i), 1, data);
  auto st = c.Stats();
  CHECK(st.bytes <= st.capacity);
  CHECK(st.objects < 200);
  CHECK(st.objects > 0);
  CHECK_EQ(st.evictions, uint64_t{200} - st.objects);
  // The most recent entry of every shard survives; the oldest one is gone.
  std::string bytes;
  uint64_t version = 0;
  CHECK(c.Get(7, "obj199", &bytes, &version) == CacheLookup::kFound);
  CHECK(c.Get(7, "obj0", &bytes, &version) == CacheLookup::kMiss);
  auto counts = c.CountsByType();
  REQUIRE(counts.size() == 8);
  CHECK_EQ(counts[7], st.objects);
  CHECK_EQ(counts[0], uint64_t{0});
}

TEST(object_cache_lru_keeps_touched_entries) {
  // One entry per shard budget: charge ~140 + 300 bytes, shard budget 1000 bytes (2 entries).
  ObjectCache c(16 * 1000);
  std::string data(300, 'y');
  // Fill, then keep touching "hot" while cold ones stream through its shard.
  c.Put(1, "hot", 1, data);
  std::string bytes;
  uint64_t version = 0;
  for (int i = 0; i < 2000; ++i) {
    c.Put(1, "cold" + std::to_string(i), 1, data);
    REQUIRE(c.Get(1, "hot", &bytes, &version) == CacheLookup::kFound);
  }
  CHECK(c.Stats().evictions > 0);
}

TEST(object_cache_shrinking_capacity_evicts_and_clear_empties) {
  ObjectCache c(1 << 20);
  for (int i = 0; i < 100; ++i) c.Put(0, std::to_string(i), 1, std::string(100, 'z'));
  CHECK_EQ(c.Stats().objects, uint64_t{100});
  c.SetCapacity(0);
  CHECK_EQ(c.Stats().objects, uint64_t{0});
  CHECK_EQ(c.Stats().bytes, uint64_t{0});
  c.SetCapacity(1 << 20);
  for (int i = 0; i < 10; ++i) c.Put(0, std::to_string(i), 1, "a");
  c.PutKey(0, 0, "k", "0");
  c.Clear();
  auto st = c.Stats();
  CHECK_EQ(st.objects + st.keys + st.tombstones, uint64_t{0});
  CHECK(c.CountsByType().empty());
}

TEST(object_cache_concurrent_writers_and_readers_keep_newest) {
  ObjectCache c(1 << 22);
  constexpr int kThreads = 4;
  constexpr int kObjects = 64;
  constexpr int kVersions = 300;
  std::vector<std::thread> threads;
  // Every thread installs every version of every object, in its own order: the newest must win.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&c, t] {
      for (int v = 1; v <= kVersions; ++v) {
        for (int o = 0; o < kObjects; ++o) {
          uint64_t version = (t % 2 == 0) ? v : kVersions + 1 - v;
          c.Put(3, "o" + std::to_string(o), version, std::to_string(version));
          std::string bytes;
          uint64_t seen = 0;
          if (c.Get(3, "o" + std::to_string(o), &bytes, &seen) == CacheLookup::kFound) {
            CHECK_EQ(bytes, std::to_string(seen));
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int o = 0; o < kObjects; ++o) {
    std::string bytes;
    uint64_t version = 0;
    REQUIRE(c.Get(3, "o" + std::to_string(o), &bytes, &version) == CacheLookup::kFound);
    CHECK_EQ(version, uint64_t{kVersions});
    CHECK_EQ(bytes, std::to_string(kVersions));
  }
}

}  // namespace object_cache_test
