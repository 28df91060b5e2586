// Progress cells: workers start claimed events through shared memory instead of Begin.
#include <vector>

#include "check.h"
#include "fake_clock.h"
#include "queue_helpers.h"

namespace progress_cells_test {

namespace {

/** What a worker does to start claimed event `i`: the start, then the swap from i - 1. */
bool StartEvent(gsf::TagQueue& q, int slot, int32_t i, int32_t start_us) {
  std::atomic<int32_t>* cells = q.ProgressCells() + static_cast<size_t>(slot) * gsf::kProgressStride;
  cells[1].store(start_us);
  int32_t expected = i - 1;
  return cells[0].compare_exchange_strong(expected, i);
}

int32_t Cell(gsf::TagQueue& q, int slot) { return q.ProgressCells()[static_cast<size_t>(slot) * gsf::kProgressStride].load(); }

}  // namespace

TEST(progress_cells_start_events_and_feed_the_watchdog_and_profiler) {
  FakeClock clock;
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t a1 = f.Push(100, "", 1), a2 = f.Push(100, "", 1), b1 = f.Push(200, "", 1);
  clock.AdvanceMs(2);
  std::vector<double> meta(3 * gsf::kTakeStride);
  std::vector<uint8_t> bytes(64);
  REQUIRE(f.queue.Take(s, meta.data(), 3, bytes.data(), bytes.size()) == 3);
  for (size_t i = 0; i < 3; ++i) CHECK_NEAR(meta[i * gsf::kTakeStride + 8], 2.0, 1e-9);  // queue age at take
  CHECK_EQ(Cell(f.queue, s), gsf::kProgressNone);
  CHECK_EQ(f.queue.SlotsRunning().size(), 0u);  // claimed, none started

  CHECK(StartEvent(f.queue, s, 0, 0));
  clock.AdvanceMs(5);
  auto running = f.queue.SlotsRunning();
  REQUIRE(running.size() == 1);
  CHECK_EQ(running[0].event_id, a1);
  CHECK_NEAR(running[0].elapsed_ms, 5.0, 1e-9);

  CHECK(!StartEvent(f.queue, s, 2, 5000));  // out of order: the cell holds 0, not 1
  CHECK(StartEvent(f.queue, s, 1, 5000));
  clock.AdvanceMs(1);
  running = f.queue.SlotsRunning();
  REQUIRE(running.size() == 1);
  CHECK_EQ(running[0].event_id, a2);
  CHECK_NEAR(running[0].elapsed_ms, 1.0, 1e-9);
  CHECK(StartEvent(f.queue, s, 2, 6000));
  running = f.queue.SlotsRunning();
  REQUIRE(running.size() == 1);
  CHECK_EQ(running[0].event_id, b1);

  std::vector<double> t(3 * gsf::kCompleteStride, 0.0);
  for (size_t i = 0; i < 3; ++i) {
    t[i * gsf::kCompleteStride + gsf::kNameId] = 1;
    t[i * gsf::kCompleteStride + gsf::kHandlerMs] = 1;
  }
  t[1 * gsf::kCompleteStride + gsf::kStartMs] = 5;
  t[2 * gsf::kCompleteStride + gsf::kStartMs] = 6;
  CHECK(f.queue.Complete(s, 3, t.data()));
  CHECK_EQ(Cell(f.queue, s), gsf::kProgressNone);

  // Queue time = age at take (2 ms) + start after the claim (0, 5, 6 ms).
  gsf::EventView v;
  REQUIRE(f.profiler.Event(1, &v));
  CHECK_EQ(v.all_time.count, 3u);
  CHECK_NEAR(v.all_time.queue.mean, (0.002 + 0.007 + 0.008) / 3, 1e-12);
  CHECK_NEAR(v.all_time.queue.max, 0.008, 1e-12);
}

TEST(progress_cells_a_timeout_revokes_the_cell_and_the_worker_stops) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100, "", 5), b1 = f.Push(200), c1 = f.Push(300);
  REQUIRE(f.Take(s, 10).size() == 3);
  CHECK(StartEvent(f.queue, s, 0, 0));  // a1 runs and hangs

  std::vector<gsf::DroppedEvent> dropped;
  CHECK(!f.queue.TimeoutSlot(s, b1, &dropped));  // b1 has not started
  CHECK(f.queue.TimeoutSlot(s, a1, &dropped));
  CHECK_EQ(Cell(f.queue, s), gsf::kProgressRevoked);
  CHECK(!StartEvent(f.queue, s, 1, 10));  // the worker's next start fails: it ends its task
  CHECK(!f.CompleteAll(s, 3));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.cancelled_total, 1u);
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(Ids(f.Take(other, 10)), (std::vector<uint64_t>{b1, c1}));  // requeued, in order
  f.CompleteAll(other, 2);

  // Released and registered again, the slot's cell starts over.
  CHECK_EQ(f.queue.SlotReleaseThread(1), 0);
  CHECK_EQ(f.queue.SlotRegister(3), s);
  CHECK_EQ(Cell(f.queue, s), gsf::kProgressNone);
}

TEST(progress_cells_a_released_thread_requeues_what_it_had_not_started) {
  QueueFixture f;
  int s = f.queue.SlotRegister(21), other = f.queue.SlotRegister(22);
  uint64_t a1 = f.Push(100), a2 = f.Push(100), a3 = f.Push(100);
  REQUIRE(f.Take(s, 3).size() == 3);
  CHECK(StartEvent(f.queue, s, 0, 0));
  CHECK(StartEvent(f.queue, s, 1, 0));
  CHECK_EQ(f.queue.SlotReleaseThread(21), 1);
  // A thread still ending can start nothing more: the cell stays revoked until re-registration.
  CHECK_EQ(Cell(f.queue, s), gsf::kProgressRevoked);
  CHECK(!StartEvent(f.queue, s, 2, 0));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.completed_total, 1u);  // a1 ran to its end
  CHECK_EQ(st.cancelled_total, 1u);  // a2 was running
  CHECK_EQ(Ids(f.Take(other, 10)), (std::vector<uint64_t>{a3}));
  (void)a1;
  (void)a2;
}

}  // namespace progress_cells_test
