// Pushes from every thread at once, as event threads do when their events invoke others: each
// consumer, while it holds a claim, pushes the next event of the chain tags it runs (into a tag
// it holds) and events of tags it does not hold; producers push from outside, in runs of single
// pushes and of batches (which wait in the run queues' inboxes until a lock files them). Some events park
// and finish later from another thread. Every event is delivered exactly once, each tag in push
// order, and no tag is held by two slots (or a slot and a parked event) at once.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "check.h"
#include "queue_helpers.h"

namespace queue_stress_test {

namespace {

constexpr int kProducers = 3;
constexpr int kConsumers = 5;
constexpr int kProducerEvents = 6000;  // per producer, over its own tags
constexpr int kChains = 256;          // chain tags: the first event pushed by the main thread
constexpr uint32_t kChainLength = 40;
constexpr int kProducerTags = 96;     // tag t belongs to producer t % kProducers
constexpr int kSideTags = 64;         // pushed to by consumers, each consumer its own tags
constexpr uint64_t kChainBase = 1ull << 33, kProducerBase = 2ull << 33, kSideBase = 3ull << 33;
constexpr int kTotalTags = kChains + kProducerTags + kSideTags;

struct Record {
  uint32_t source;  // producer or consumer that pushed it (kChainSource for chains)
  uint32_t tag_index;
  uint64_t seq;  // per (tag, source), starting at 1
};
constexpr uint32_t kSources = kProducers + kConsumers + 1;
constexpr uint32_t kChainSource = kSources - 1;

uint64_t TagOf(uint32_t index) {
  if (index < kChains) return kChainBase + index;
  if (index < kChains + kProducerTags) return kProducerBase + index;
  return kSideBase + index;
}
uint32_t IndexOf(uint64_t tag) { return static_cast<uint32_t>(tag & 0xffffffffu); }

std::string PayloadOf(const Record& rec) {
  std::string payload(reinterpret_cast<const char*>(&rec), sizeof rec);
  payload.append(rec.seq % 24, 'x');
  return payload;
}

void PushRecord(QueueFixture& f, const Record& rec) { f.Push(TagOf(rec.tag_index), PayloadOf(rec)); }

/** Pushes `recs` in one batch and empties it. */
void PushRecords(QueueFixture& f, std::vector<Record>* recs) {
  if (recs->empty()) return;
  std::vector<std::string> payloads;
  std::vector<gsf::EventInput> in(recs->size());
  payloads.reserve(recs->size());
  for (size_t i = 0; i < recs->size(); ++i) {
    payloads.push_back(PayloadOf((*recs)[i]));
    in[i].tag = TagOf((*recs)[i].tag_index);
    in[i].payload = reinterpret_cast<const uint8_t*>(payloads.back().data());
    in[i].payload_len = payloads.back().size();
  }
  f.queue.PushBatch(in.data(), in.size());
  recs->clear();
}

}  // namespace

TEST(stress_pushes_from_every_thread_keep_tag_order_exclusivity_and_exactly_once) {
  QueueFixture f(gsf::TagQueue::kRunQueues);
  std::unique_ptr<std::atomic<uint64_t>[]> last(new std::atomic<uint64_t>[kTotalTags * kSources]);
  std::unique_ptr<std::atomic<int>[]> in_use(new std::atomic<int>[kTotalTags]);
  for (uint32_t i = 0; i < kTotalTags * kSources; ++i) last[i] = 0;
  for (int i = 0; i < kTotalTags; ++i) in_use[i] = 0;
  std::atomic<uint64_t> consumed{0}, side_pushed{0};
  std::atomic<int> order_errors{0}, exclusivity_errors{0}, payload_errors{0}, producers_done{0};
  const uint64_t expected_base = static_cast<uint64_t>(kProducers) * kProducerEvents + kChains * kChainLength;

  for (uint32_t c = 0; c < kChains; ++c) PushRecord(f, Record{kChainSource, c, 1});

  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      std::vector<uint64_t> seq(kTotalTags, 0);
      std::vector<Record> batch;
      uint32_t rng = 777u + static_cast<uint32_t>(p);
      bool batching = false;
      size_t batch_size = 1;
      for (int i = 0; i < kProducerEvents; ++i) {
        rng = rng * 1664525u + 1013904223u;
        uint32_t tag_index = kChains + ((rng >> 8) % (kProducerTags / kProducers)) * kProducers + static_cast<uint32_t>(p);
        // Now and then the producer switches between single pushes and batches of 1 to 32.
        if ((rng >> 24) % 16 == 0) {
          PushRecords(f, &batch);  // what it batched goes before its next single push
          batching = !batching;
          batch_size = 1 + (rng >> 4) % 32;
        }
        const Record rec{static_cast<uint32_t>(p), tag_index, ++seq[tag_index]};
        if (!batching) {
          PushRecord(f, rec);
          continue;
        }
        batch.push_back(rec);
        if (batch.size() >= batch_size) PushRecords(f, &batch);
      }
      PushRecords(f, &batch);
      producers_done++;
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      const uint32_t source = kProducers + static_cast<uint32_t>(c);
      int slot = f.queue.SlotRegister(500 + c);
      std::vector<double> meta(32 * gsf::kTakeStride);
      std::vector<uint8_t> bytes(512);
      std::vector<double> timings(32 * gsf::kCompleteStride, 0.0);
      std::vector<uint64_t> side_seq(kTotalTags, 0);
      std::vector<uint32_t> held;
      std::vector<uint64_t> parked;  // parked event ids, finished after the claim completes
      std::vector<uint32_t> parked_tags;
      uint32_t rng = 99u + static_cast<uint32_t>(c);
      for (;;) {
        int64_t n = f.TakeRaw(slot, meta.data(), 32, bytes.data(), bytes.size());
        if (n <= 0) {
          if (producers_done.load() == kProducers && consumed.load() == expected_base + side_pushed.load()) break;
          std::this_thread::yield();
          continue;
        }
        held.clear();
        std::vector<uint32_t> skip;  // tags of this claim parked: their later events go back
        for (int64_t i = 0; i < n; ++i) {
          const double* m = &meta[static_cast<size_t>(i) * gsf::kTakeStride];
          uint32_t tag_index = IndexOf(static_cast<uint64_t>(m[gsf::kTakeTag]));
          if (std::find(skip.begin(), skip.end(), tag_index) != skip.end()) continue;
          if (std::find(held.begin(), held.end(), tag_index) == held.end()) {
            held.push_back(tag_index);
            if (in_use[tag_index].exchange(slot + 1) != 0) exclusivity_errors++;
          }
          f.Start(slot, static_cast<int32_t>(i));
          Record rec;
          std::memcpy(&rec, bytes.data() + static_cast<size_t>(m[gsf::kTakePayloadOffset]), sizeof rec);
          if (rec.tag_index != tag_index || static_cast<size_t>(m[gsf::kTakePayloadLength]) != sizeof rec + rec.seq % 24) {
            payload_errors++;
          }
          std::atomic<uint64_t>& prev = last[tag_index * kSources + rec.source];
          if (rec.seq != prev.load() + 1) order_errors++;
          prev.store(rec.seq);
          consumed++;
          rng = rng * 1664525u + 1013904223u;
          // The next link of a chain goes into the tag this slot holds.
          // Half of them (and of the side events below) as a batch of one, through the inbox.
          if (rec.source == kChainSource && rec.seq < kChainLength) {
            const Record next{kChainSource, tag_index, rec.seq + 1};
            if ((rng >> 3) % 2 == 0) {
              PushRecord(f, next);
            } else {
              std::vector<Record> one{next};
              PushRecords(f, &one);
            }
          }
          // Now and then an event of a tag this thread does not hold.
          if ((rng >> 12) % 8 == 0) {
            uint32_t side = kChains + kProducerTags + ((rng >> 16) % (kSideTags / kConsumers)) * kConsumers + static_cast<uint32_t>(c);
            side_pushed++;
            const Record rec_side{source, side, ++side_seq[side]};
            if ((rng >> 5) % 2 == 0) {
              PushRecord(f, rec_side);
            } else {
              std::vector<Record> one{rec_side};
              PushRecords(f, &one);
            }
          }
          // Now and then the event awaits: it parks and finishes after the claim.
          if ((rng >> 20) % 16 == 0 && f.queue.Park(slot, static_cast<size_t>(i), 0)) {
            parked.push_back(static_cast<uint64_t>(m[gsf::kTakeId]));
            parked_tags.push_back(tag_index);
            skip.push_back(tag_index);
          }
        }
        // Released before complete: once complete returns, another slot may hold the tag. A
        // parked event's tag stays ours until it finishes.
        for (uint32_t h : held) {
          if (std::find(parked_tags.begin(), parked_tags.end(), h) == parked_tags.end()) in_use[h].store(0);
        }
        if (f.queue.Complete(slot, static_cast<size_t>(n), timings.data()) == gsf::kCompleteRevoked) exclusivity_errors++;
        for (size_t k = 0; k < parked.size(); ++k) {
          in_use[parked_tags[k]].store(0);
          if (f.queue.FinishParked(parked[k], timings.data()) == gsf::kCompleteRevoked) exclusivity_errors++;
        }
        parked.clear();
        parked_tags.clear();
      }
    });
  }
  for (auto& t : threads) t.join();

  const uint64_t total = expected_base + side_pushed.load();
  CHECK_EQ(consumed.load(), total);
  CHECK_EQ(order_errors.load(), 0);
  CHECK_EQ(exclusivity_errors.load(), 0);
  CHECK_EQ(payload_errors.load(), 0);
  for (uint32_t ch = 0; ch < kChains; ++ch) CHECK_EQ(last[ch * kSources + kChainSource].load(), uint64_t{kChainLength});
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.pushed_total, total);
  CHECK_EQ(st.completed_total, total);
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(f.queue.ParkedCount(), 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

}  // namespace queue_stress_test
