// Name table, configuration blob, wake signal, session accounts and the sparing map.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "../core/config_blob.h"
#include "../core/name_table.h"
#include "../core/session_accounts.h"
#include "../core/sparing_map.h"
#include "../core/wake_signal.h"
#include "check.h"

namespace misc_test {

TEST(names_intern_is_stable_and_dense) {
  gsf::NameTable t;
  uint32_t a = t.Intern("login"), b = t.Intern("move"), a2 = t.Intern("login");
  CHECK_EQ(a, 1u);
  CHECK_EQ(b, 2u);
  CHECK_EQ(a2, a);
  CHECK_EQ(t.NameOf(a), std::string("login"));
  CHECK_EQ(t.NameOf(0), std::string());
  CHECK_EQ(t.NameOf(99), std::string());
  CHECK_EQ(t.Find("move"), b);
  CHECK_EQ(t.Find("nope"), 0u);
  CHECK(t.Intern("") >= 1u);
  CHECK_EQ(t.NameOf(t.Intern("")), std::string());
}

TEST(names_of_events_are_bounded_in_number_and_length) {
  gsf::NameTable t;
  uint32_t handler = t.Intern("handler");
  for (size_t i = 0; i < gsf::kMaxEventNames; ++i) {
    std::string name = "n-" + std::to_string(i);
    CHECK_EQ(t.NameOf(t.InternEventName(name)), name);
  }
  uint32_t other = t.InternEventName("one too many");
  CHECK_EQ(t.NameOf(other), std::string(gsf::kOtherEventNames));
  CHECK_EQ(t.InternEventName("and another"), other);
  CHECK_EQ(t.InternEventName("n-0"), t.Find("n-0"));  // names seen before keep their ids
  CHECK_EQ(t.InternEventName("handler"), handler);
  CHECK_EQ(t.Intern("late.handler"), t.Find("late.handler"));  // handler names are not bounded
  CHECK(t.Find("late.handler") != other);
  // Default child names stop growing at kMaxEventNameBytes.
  CHECK_EQ(gsf::NameTable::ChildName("tick", 3), std::string("tick_#3"));
  std::string parent(gsf::kMaxEventNameBytes - 3, 'p');
  CHECK_EQ(gsf::NameTable::ChildName(parent, 1), parent + "_#1");
  CHECK_EQ(gsf::NameTable::ChildName(parent, 10), parent);
}

TEST(names_concurrent_interning_agrees) {
  gsf::NameTable t;
  constexpr int kThreads = 6, kNames = 2000;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int i = 0; i < kNames; ++i) {
        int k = (i * 7 + th * 13) % kNames;
        ids[th][k] = t.Intern("event_" + std::to_string(k));
      }
    });
  }
  for (auto& x : threads) x.join();
  CHECK_EQ(t.Size(), static_cast<size_t>(kNames));
  int mismatches = 0;
  for (int k = 0; k < kNames; ++k) {
    for (int th = 1; th < kThreads; ++th) mismatches += ids[th][k] != ids[0][k];
    mismatches += t.NameOf(ids[0][k]) != "event_" + std::to_string(k);
  }
  CHECK_EQ(mismatches, 0);
}

TEST(config_blob_versions) {
  gsf::ConfigBlob c;
  CHECK_EQ(c.Version(), 0u);
  CHECK_EQ(c.Get(), std::string("{}"));
  c.Set("{\"v\":1}");
  CHECK_EQ(c.Version(), 1u);
  CHECK_EQ(c.Get(), std::string("{\"v\":1}"));
  c.Set("{\"v\":1}");
  CHECK_EQ(c.Version(), 2u);  // every set bumps, even with the same text
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c, t] {
      for (int i = 0; i < 500; ++i) {
        c.Set("{\"t\":" + std::to_string(t) + "}");
        std::string s = c.Get();
        (void)s;
      }
    });
  }
  for (auto& x : threads) x.join();
  CHECK_EQ(c.Version(), 2002u);
}

TEST(wake_signal_coalesces_and_survives_sink_changes) {
  gsf::WakeSignal w;
  std::atomic<int> calls{0};
  w.Notify();  // no sink, not armed
  w.Arm(nullptr);
  w.Notify();  // armed without a sink: disarms, calls nothing
  CHECK(!w.Armed());
  w.SetSink([&] { calls++; });
  w.Notify();
  CHECK_EQ(calls.load(), 0);
  w.Arm([] { return false; });
  w.Notify();
  w.Notify();
  CHECK_EQ(calls.load(), 1);
  w.Arm([] { return true; });
  CHECK_EQ(calls.load(), 2);
  CHECK_EQ(w.FiredCount(), 3u);  // the sinkless fire above counts too
  w.SetSink(nullptr);
  // Swapping the sink while another thread notifies must not crash or lose a fire. The notifier
  // is the only thread that notifies, so each of its Arm + Notify rounds fires exactly once.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> rounds{0};
  std::thread notifier([&] {
    while (!stop.load()) {
      w.Arm(nullptr);
      w.Notify();
      rounds++;
    }
  });
  std::atomic<int> swapped_calls{0};
  constexpr int kSwaps = 200;
  for (int i = 0; i < kSwaps; ++i) {
    // Each installed sink stays until the notifier has called it once.
    int before = swapped_calls.load();
    w.SetSink([&] { swapped_calls++; });
    while (swapped_calls.load() == before) std::this_thread::yield();
    w.SetSink(nullptr);
  }
  stop = true;
  notifier.join();
  CHECK_EQ(w.FiredCount(), 3u + rounds.load());
  CHECK(swapped_calls.load() >= kSwaps);
  CHECK(static_cast<uint64_t>(swapped_calls.load()) <= rounds.load());
  CHECK_EQ(calls.load(), 2);  // the first sink was replaced before the stress and never called again
  CHECK(!w.Armed());
}

TEST(session_accounts_bind_rebind_and_erase_while_read) {
  gsf::SessionAccounts table;
  std::string account;
  CHECK(!table.Get(7, &account));
  table.Set(7, "ada");
  table.Set(9, "bob");
  CHECK(table.Get(7, &account));
  CHECK_EQ(account, std::string("ada"));
  table.Set(7, "grace");  // the session switched accounts
  CHECK(table.Get(7, &account));
  CHECK_EQ(account, std::string("grace"));
  CHECK_EQ(table.Size(), size_t{2});
  table.Erase(7);
  table.Erase(7);
  CHECK(!table.Get(7, &account));
  CHECK_EQ(table.Size(), size_t{1});
  // Readers on other threads see a whole account or none while the owner binds and unbinds.
  // Every side does a bounded amount of work and yields now and then: the lock may prefer
  // readers, and readers spinning until the writer is done could hold it off for a minute.
  std::atomic<int> started{0};
  std::atomic<int> torn{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      started++;
      std::string seen;
      for (int k = 0; k < 20000; ++k) {
        if (table.Get(1, &seen) && seen != "account-one" && seen != "account-two") torn++;
        if (k % 64 == 0) std::this_thread::yield();
      }
    });
  }
  while (started.load() < 3) std::this_thread::yield();
  for (int i = 0; i < 3000; ++i) {
    if (i % 3 == 2) table.Erase(1);
    else table.Set(1, i % 2 ? "account-one" : "account-two");
    if (i % 16 == 0) std::this_thread::yield();
  }
  for (auto& t : readers) t.join();
  CHECK_EQ(torn.load(), 0);
}

namespace {
struct SpareState {
  uint32_t head = 7;
  int32_t owner = -1;
  bool parked = false;
};
}  // namespace

TEST(sparing_map_reuses_erased_nodes_with_fresh_values) {
  gsf::SparingMap<SpareState> m;
  SpareState& a = m[10];
  CHECK_EQ(a.head, 7u);
  a.head = 1;
  a.owner = 3;
  a.parked = true;
  const SpareState* where = &a;
  CHECK_EQ(m.erase(10), 1u);
  CHECK_EQ(m.erase(10), 0u);
  CHECK_EQ(m.spare(), 1u);
  CHECK(m.find(10) == m.end());
  // The next new key gets the kept node, value-initialized again.
  SpareState& b = m[20];
  CHECK(&b == where);
  CHECK_EQ(b.head, 7u);
  CHECK_EQ(b.owner, -1);
  CHECK(!b.parked);
  CHECK_EQ(m.spare(), 0u);
  // A key already there is found, not reset.
  b.head = 9;
  CHECK_EQ(m[20].head, 9u);
  CHECK_EQ(m.size(), 1u);
}

TEST(sparing_map_erase_while_iterating_and_its_cap) {
  gsf::SparingMap<SpareState> m;
  for (uint64_t k = 0; k < 100; ++k) m[k].head = static_cast<uint32_t>(k);
  size_t kept = 0;
  for (auto it = m.begin(); it != m.end();) {
    if (it->second.head % 2 == 0) {
      it = m.erase(it);
      ++kept;
    } else {
      ++it;
    }
  }
  CHECK_EQ(kept, 50u);
  CHECK_EQ(m.size(), 50u);
  CHECK_EQ(m.spare(), 50u);
  for (const auto& [key, state] : m) CHECK_EQ(key % 2, 1u);
  // Past kKeep kept nodes, an erase frees its node.
  for (uint64_t k = 1000; k < 1000 + gsf::SparingMap<SpareState>::kKeep + 10; ++k) m[k];
  CHECK_EQ(m.spare(), 0u);
  for (uint64_t k = 1000; k < 1000 + gsf::SparingMap<SpareState>::kKeep + 10; ++k) m.erase(k);
  CHECK_EQ(m.spare(), gsf::SparingMap<SpareState>::kKeep);
  CHECK_EQ(m.size(), 50u);
}

}  // namespace misc_test
