// Timeouts racing claims that span run queues: consumers take, start and complete while a
// watchdog times out whatever event it sees running, and a consumer whose slot was revoked
// releases its thread and registers again, as a replaced worker does. No event starts twice,
// and every event pushed is completed or cancelled, with nothing left claimed or queued.
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "check.h"
#include "queue_helpers.h"

namespace queue_revoke_stress_test {

namespace {

constexpr int kProducers = 2;
constexpr int kConsumers = 4;
constexpr int kEventsPerProducer = 8000;
constexpr int kTags = 200;  // spread over every run queue
constexpr int kMaxTimeouts = 60;

}  // namespace

TEST(stress_timeouts_racing_claims_over_run_queues_lose_and_repeat_nothing) {
  QueueFixture f(gsf::TagQueue::kRunQueues);
  const uint64_t total = static_cast<uint64_t>(kProducers) * kEventsPerProducer;
  // Ids start at 1 and are drawn by pushes only.
  std::unique_ptr<std::atomic<uint8_t>[]> started(new std::atomic<uint8_t>[total + 2]);
  for (uint64_t i = 0; i < total + 2; ++i) started[i] = 0;
  std::atomic<int> producers_done{0}, twice{0}, out_of_range{0}, consumers_done{0};
  std::atomic<uint64_t> cancelled{0};
  std::atomic<int> timeouts{0}, releases{0};

  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      uint32_t rng = 31u + static_cast<uint32_t>(p);
      for (int i = 0; i < kEventsPerProducer; ++i) {
        rng = rng * 1664525u + 1013904223u;
        f.Push(1000 + (rng >> 8) % kTags, std::string(rng % 16, 'x'));
      }
      producers_done++;
    });
  }
  auto finished = [&] {
    if (producers_done.load() != kProducers) return false;
    gsf::QueueStats st = f.queue.Stats();
    return st.waiting == 0 && st.outstanding == 0;
  };
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      double thread_id = 1000.0 * (c + 1);
      int slot = f.queue.SlotRegister(thread_id);
      std::vector<double> meta(48 * gsf::kTakeStride);
      std::vector<uint8_t> bytes(4096);
      std::vector<double> timings(48 * gsf::kCompleteStride, 0.0);
      auto replace = [&] {
        // The replaced worker's slot is let go (its unstarted events were requeued by the
        // timeout) and a fresh one registered.
        f.queue.SlotReleaseThread(thread_id);
        releases++;
        thread_id += 1;
        slot = f.queue.SlotRegister(thread_id);
      };
      for (;;) {
        int64_t n = f.TakeRaw(slot, meta.data(), 48, bytes.data(), bytes.size());
        if (n == -1) {
          replace();
          continue;
        }
        if (n <= 0) {
          if (finished()) break;
          std::this_thread::yield();
          continue;
        }
        bool revoked = false;
        for (int64_t i = 0; i < n; ++i) {
          if (!f.Start(slot, static_cast<int32_t>(i))) {
            revoked = true;
            break;
          }
          const auto id = static_cast<uint64_t>(meta[static_cast<size_t>(i) * gsf::kTakeStride + gsf::kTakeId]);
          if (id == 0 || id > total) {
            out_of_range++;
            continue;
          }
          if (started[id].exchange(1) != 0) twice++;
          // Now and then an event runs a while: the watchdog sees it running.
          if (id % 50 == 0) {
            const int64_t until = gsf::NowNs() + 200 * 1000;
            while (gsf::NowNs() < until) std::this_thread::yield();
          }
        }
        if (revoked || f.queue.Complete(slot, static_cast<size_t>(n), timings.data()) == gsf::kCompleteRevoked) replace();
      }
      f.queue.SlotReleaseThread(thread_id);
      consumers_done++;
    });
  }
  // The watchdog: times out an event it sees running, now and then, until the consumers are done.
  threads.emplace_back([&] {
    uint32_t rng = 5u;
    while (consumers_done.load() < kConsumers) {
      rng = rng * 1664525u + 1013904223u;
      if (timeouts.load() < kMaxTimeouts && (rng >> 16) % 4 == 0) {
        for (const gsf::RunningSlot& r : f.queue.SlotsRunning()) {
          if (r.parked) continue;
          std::vector<gsf::DroppedEvent> dropped;
          if (f.queue.TimeoutSlot(r.slot, r.event_id, &dropped)) {
            timeouts++;
            cancelled += 1 + dropped.size();
          }
          break;
        }
      }
      std::this_thread::yield();
    }
  });
  for (auto& t : threads) t.join();

  CHECK_EQ(twice.load(), 0);
  CHECK_EQ(out_of_range.load(), 0);
  CHECK(timeouts.load() > 0);
  CHECK_EQ(releases.load() >= timeouts.load(), true);
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.pushed_total, total);
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.outstanding, 0u);
  // Each timeout cancels the running event and its tag's other events; the rest completed.
  CHECK_EQ(st.cancelled_total, cancelled.load());
  CHECK_EQ(st.completed_total + st.cancelled_total, total);
  uint64_t ran = 0;
  for (uint64_t i = 1; i <= total; ++i) ran += started[i].load();
  // Started: everything completed, plus the timed-out events themselves (they had started).
  CHECK_EQ(ran, st.completed_total + static_cast<uint64_t>(timeouts.load()));
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

}  // namespace queue_revoke_stress_test
