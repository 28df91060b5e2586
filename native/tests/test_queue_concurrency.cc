// Many producers and consumers at once: every event delivered exactly once,
// each tag strictly in push order, and no tag held by two slots at a time.
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "check.h"
#include "queue_helpers.h"

namespace queue_concurrency_test {

namespace {

constexpr int kProducers = 8;
constexpr int kConsumers = 4;
constexpr int kEventsPerProducer = 25000;  // 200k in all
constexpr int kOwnedTags = 1024;           // tag t belongs to producer t % kProducers
constexpr int kSharedTags = 8;             // pushed to by every producer
constexpr uint64_t kTagBase = 1ull << 32;

struct Record {
  uint32_t producer;
  uint32_t tag_index;
  uint64_t seq;  // per (tag, producer), starting at 1
};

uint64_t TagOf(uint32_t index) { return kTagBase + index; }

}  // namespace

TEST(concurrent_producers_and_consumers_keep_tag_order_and_exclusivity) {
  QueueFixture f(gsf::TagQueue::kRunQueues);
  const int total_tags = kOwnedTags + kSharedTags;
  // last[tag * kProducers + producer]: last sequence seen per (tag, producer).
  std::unique_ptr<std::atomic<uint64_t>[]> last(new std::atomic<uint64_t>[total_tags * kProducers]);
  std::unique_ptr<std::atomic<int>[]> in_use(new std::atomic<int>[total_tags]);
  std::unique_ptr<std::atomic<int>[]> delivered(new std::atomic<int>[total_tags]);
  for (int i = 0; i < total_tags * kProducers; ++i) last[i] = 0;
  for (int i = 0; i < total_tags; ++i) {
    in_use[i] = 0;
    delivered[i] = 0;
  }
  std::atomic<int> producers_done{0};
  std::atomic<uint64_t> consumed{0};
  std::atomic<int> order_errors{0}, exclusivity_errors{0}, payload_errors{0};

  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      std::vector<uint64_t> seq(total_tags, 0);
      uint32_t rng = 12345u + static_cast<uint32_t>(p);
      for (int i = 0; i < kEventsPerProducer; ++i) {
        rng = rng * 1664525u + 1013904223u;
        uint32_t tag_index;
        if (i % 10 == 0) {
          tag_index = kOwnedTags + (rng >> 8) % kSharedTags;
        } else {
          tag_index = static_cast<uint32_t>(((rng >> 8) % (kOwnedTags / kProducers)) * kProducers + p);
        }
        Record rec{static_cast<uint32_t>(p), tag_index, ++seq[tag_index]};
        // Varying payload sizes exercise the partial-take path of small byte buffers.
        std::string payload(reinterpret_cast<const char*>(&rec), sizeof rec);
        payload.append((rng >> 4) % 48, static_cast<char>('a' + p));
        f.Push(TagOf(tag_index), payload, 0, 0, 0);
      }
      producers_done++;
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      int slot = f.queue.SlotRegister(100 + c);
      std::vector<double> meta(64 * gsf::kTakeStride);
      std::vector<uint8_t> bytes(1024);
      std::vector<double> timings(64 * gsf::kCompleteStride, 0.0);
      std::vector<uint32_t> held;
      while (true) {
        int64_t n = f.TakeRaw(slot, meta.data(), 64, bytes.data(), bytes.size());
        if (n <= 0) {
          if (producers_done.load() == kProducers && f.queue.Waiting() == 0) break;
          std::this_thread::yield();
          continue;
        }
        held.clear();
        for (int64_t i = 0; i < n; ++i) {
          const double* m = &meta[static_cast<size_t>(i) * gsf::kTakeStride];
          uint32_t tag_index = static_cast<uint32_t>(static_cast<uint64_t>(m[1]) - kTagBase);
          if (held.empty() || held.back() != tag_index) {
            // A tag appears once per claim, as one consecutive run.
            for (uint32_t h : held) {
              if (h == tag_index) exclusivity_errors++;
            }
            held.push_back(tag_index);
            if (in_use[tag_index].exchange(slot + 1) != 0) exclusivity_errors++;
          }
          f.Start(slot, static_cast<int32_t>(i));
          Record rec;
          std::memcpy(&rec, bytes.data() + static_cast<size_t>(m[6]), sizeof rec);
          size_t len = static_cast<size_t>(m[7]);
          for (size_t k = sizeof rec; k < len; ++k) {
            if (bytes[static_cast<size_t>(m[6]) + k] != 'a' + rec.producer) payload_errors++;
          }
          if (rec.tag_index != tag_index) payload_errors++;
          std::atomic<uint64_t>& prev = last[tag_index * kProducers + rec.producer];
          if (rec.seq != prev.load() + 1) order_errors++;
          prev.store(rec.seq);
          delivered[tag_index]++;
        }
        // Released before complete: once complete returns, another slot may hold the tag.
        for (uint32_t h : held) in_use[h].store(0);
        if (!f.queue.Complete(slot, static_cast<size_t>(n), timings.data())) exclusivity_errors++;
        consumed += static_cast<uint64_t>(n);
      }
    });
  }
  for (auto& t : threads) t.join();

  CHECK_EQ(consumed.load(), static_cast<uint64_t>(kProducers) * kEventsPerProducer);
  CHECK_EQ(order_errors.load(), 0);
  CHECK_EQ(exclusivity_errors.load(), 0);
  CHECK_EQ(payload_errors.load(), 0);
  // Exactly once: every (tag, producer) sequence ended at the number pushed.
  uint64_t total_seen = 0;
  for (int i = 0; i < total_tags * kProducers; ++i) total_seen += last[i].load();
  CHECK_EQ(total_seen, static_cast<uint64_t>(kProducers) * kEventsPerProducer);
  int delivered_sum = 0;
  for (int i = 0; i < total_tags; ++i) delivered_sum += delivered[i].load();
  CHECK_EQ(delivered_sum, kProducers * kEventsPerProducer);
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.pushed_total, static_cast<uint64_t>(kProducers) * kEventsPerProducer);
  CHECK_EQ(st.completed_total, st.pushed_total);
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

}  // namespace queue_concurrency_test
