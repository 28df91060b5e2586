// Flush mailbox: one wake-up per drain, notes of many threads all delivered in posting order.
#include <atomic>
#include <thread>
#include <vector>

#include "../core/flush_mailbox.h"
#include "check.h"

namespace flush_mailbox_test {

TEST(flush_mailbox_first_note_after_a_drain_wakes) {
  gsf::FlushMailbox m;
  CHECK(m.Post({1, 10, 0}));
  CHECK(!m.Post({2, 20, 1}));
  CHECK_EQ(m.Size(), 2u);
  std::vector<gsf::FlushNote> got = m.Take();
  CHECK_EQ(got.size(), 2u);
  CHECK_EQ(got[0].thread, 1);
  CHECK_EQ(got[0].end, 10u);
  CHECK_EQ(got[1].seq, 1.0);
  CHECK_EQ(m.Take().size(), 0u);
  CHECK(m.Post({1, 30, 2}));
}

TEST(flush_mailbox_concurrent_posts_are_all_taken_once_in_each_threads_order) {
  gsf::FlushMailbox m;
  constexpr int kThreads = 4, kNotes = 20000;
  std::atomic<int> wakes{0};
  std::atomic<bool> done{false};
  std::vector<std::vector<uint32_t>> seen(kThreads);
  std::thread consumer([&] {
    for (;;) {
      bool last = done.load();
      for (const gsf::FlushNote& n : m.Take()) seen[n.thread].push_back(n.end);
      if (last) break;
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (uint32_t i = 0; i < kNotes; ++i) {
        if (m.Post({t, i, static_cast<double>(i)})) wakes.fetch_add(1);
      }
    });
  }
  for (auto& p : producers) p.join();
  done.store(true);
  consumer.join();
  for (int t = 0; t < kThreads; ++t) {
    CHECK_EQ(seen[t].size(), static_cast<size_t>(kNotes));
    for (uint32_t i = 0; i < kNotes; ++i) CHECK_EQ(seen[t][i], i);
  }
  // Never more wake-ups than notes, at least one, and each one followed a drain.
  CHECK(wakes.load() >= 1);
  CHECK(wakes.load() <= kThreads * kNotes);
}

}  // namespace flush_mailbox_test
