// Parked events: an awaiting event keeps its tag but not its worker.
#include <algorithm>
#include <vector>

#include "check.h"
#include "fake_clock.h"
#include "queue_helpers.h"

namespace queue_parked_test {

namespace {

std::vector<double> Timing(double handler_ms, double io_ms, double name_id, double start_ms) {
  std::vector<double> t(gsf::kCompleteStride, 0.0);
  t[gsf::kHandlerMs] = handler_ms;
  t[gsf::kIoWaitMs] = io_ms;
  t[gsf::kNameId] = name_id;
  t[gsf::kStartMs] = start_ms;
  return t;
}

}  // namespace

TEST(parked_event_holds_its_tag_and_its_claimed_successors_go_back_in_order) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100), a2 = f.Push(100, "a2"), b1 = f.Push(200), a3 = f.Push(100);
  REQUIRE(f.Take(s, 10).size() == 4);  // a1 a2 a3 b1 (tags in claim order)
  REQUIRE(f.Start(s, 0));
  CHECK(f.queue.Park(s, 0, 0));
  CHECK(!f.queue.Park(s, 0, 0));  // already parked
  // a2 and a3 are skipped by the worker; b1 runs.
  REQUIRE(f.Start(s, 3));
  CHECK(!f.queue.Park(s, 1, 0));  // not the running event
  uint64_t a4 = f.Push(100);
  CHECK_EQ(f.queue.Complete(s, 4, std::vector<double>(4 * gsf::kCompleteStride, 0.0).data()), gsf::kCompleteDone);

  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.completed_total, 1u);  // b1
  CHECK_EQ(st.outstanding, 1u);      // a1, parked
  CHECK_EQ(st.waiting, 3u);          // a2 a3 a4
  CHECK_EQ(f.queue.ParkedCount(), 1u);
  CHECK_EQ(f.Take(other, 10).size(), 0u);  // tag 100 is held by a1

  auto t = Timing(1, 0, 0, 0);
  CHECK_EQ(f.queue.FinishParked(a1, t.data()), gsf::kCompleteMadeReady);
  CHECK_EQ(f.queue.FinishParked(a1, t.data()), gsf::kCompleteRevoked);  // once only
  auto got = f.Take(other, 10);
  CHECK_EQ(Ids(got), (std::vector<uint64_t>{a2, a3, a4}));
  CHECK_EQ(got[0].payload, std::string("a2"));
  CHECK(f.CompleteAll(other, 3));
  st = f.queue.Stats();
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.completed_total, 5u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
  (void)b1;
}

TEST(parked_event_that_finishes_inside_its_claim_frees_the_tag_at_complete) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100), a2 = f.Push(100);
  REQUIRE(f.Take(s, 10).size() == 2);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  auto t = Timing(0.5, 0, 0, 0);
  CHECK_EQ(f.queue.FinishParked(a1, t.data()), gsf::kCompleteDone);  // the claim still holds the tag
  CHECK_EQ(f.Take(other, 10).size(), 0u);
  CHECK_EQ(f.queue.Complete(s, 2, std::vector<double>(2 * gsf::kCompleteStride, 0.0).data()),
           gsf::kCompleteMadeReady);  // a2 was skipped: back to the queue, tag ready
  CHECK_EQ(Ids(f.Take(other, 10)), (std::vector<uint64_t>{a2}));
  CHECK(f.CompleteAll(other, 1));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.completed_total, 2u);
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(parked_event_sample_counts_queue_time_to_its_start) {
  FakeClock clock;
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t a1 = f.Push(100, "", 7);
  clock.AdvanceMs(3);
  f.Take(s, 1);
  clock.AdvanceMs(1);
  double start = 0;
  REQUIRE(f.Start(s, 0, &start));
  REQUIRE(f.queue.Park(s, 0, 9));  // renamed while it ran
  CHECK(f.CompleteAll(s, 1));
  clock.AdvanceMs(50);
  auto t = Timing(2, 48, 9, start);
  CHECK(f.queue.FinishParked(a1, t.data()) != gsf::kCompleteRevoked);
  gsf::EventView v;
  REQUIRE(f.profiler.Event(9, &v));
  CHECK_EQ(v.all_time.count, 1u);
  CHECK_NEAR(v.all_time.queue.mean, 0.004, 1e-12);
  CHECK_NEAR(v.all_time.handler.mean, 0.002, 1e-12);
  CHECK_NEAR(v.all_time.io_wait.mean, 0.048, 1e-12);
}

TEST(parked_event_is_listed_running_with_its_age_and_final_name) {
  FakeClock clock;
  QueueFixture f;
  int s = f.queue.SlotRegister(4);
  f.queue.SlotAttachTask(s, 77);
  uint64_t a1 = f.Push(100, "", 3, 55), b1 = f.Push(200, "", 4);
  f.Take(s, 10);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  REQUIRE(f.Start(s, 1));
  clock.AdvanceMs(20);
  f.queue.RenameParked(a1, 12);
  auto running = f.queue.SlotsRunning();
  REQUIRE(running.size() == 2);
  CHECK_EQ(running[0].event_id, b1);
  CHECK(!running[0].parked);
  CHECK_EQ(running[1].event_id, a1);
  CHECK(running[1].parked);
  CHECK_EQ(running[1].name_id, 12u);
  CHECK_EQ(running[1].session_id, 55u);
  CHECK_EQ(running[1].task_id, 77.0);
  CHECK_NEAR(running[1].elapsed_ms, 20.0, 1e-9);
  CHECK(f.CompleteAll(s, 2));
  running = f.queue.SlotsRunning();
  REQUIRE(running.size() == 1);
  CHECK_EQ(running[0].event_id, a1);
}

TEST(parked_timeout_cancels_the_tag_and_leaves_the_slot_working) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t a1 = f.Push(100, "frame", 5, 100, 2, 9), a2 = f.Push(100);
  REQUIRE(f.Take(s, 10).size() == 2);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 6));
  CHECK(f.CompleteAll(s, 2));
  uint64_t a3 = f.Push(100);
  std::vector<gsf::DroppedEvent> dropped;
  uint32_t name = 0;
  gsf::DroppedEvent timed_out{};
  CHECK(f.queue.TimeoutParked(a1, &dropped, &name, &timed_out));
  CHECK_EQ(name, 6u);
  // The event itself, under the name it was queued with, and its payload (a client's frame is answered).
  CHECK_EQ(timed_out.id, a1);
  CHECK_EQ(timed_out.name_id, 5u);
  CHECK_EQ(timed_out.handler_id, 9u);
  CHECK_EQ(timed_out.payload, std::string("frame"));
  CHECK_EQ(DroppedIds(dropped), (std::vector<uint64_t>{a2, a3}));
  CHECK(!f.queue.TimeoutParked(a1, &dropped, &name));
  auto t = Timing(1, 0, 6, 0);
  CHECK_EQ(f.queue.FinishParked(a1, t.data()), gsf::kCompleteRevoked);  // its result is dropped
  gsf::EventView v;
  REQUIRE(f.profiler.Event(6, &v));
  CHECK_EQ(v.timeout_count, 1u);
  CHECK_EQ(v.all_time.count, 0u);
  // The slot was not revoked, and the tag takes new events.
  uint64_t a4 = f.Push(100);
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{a4}));
  CHECK(f.CompleteAll(s, 1));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.cancelled_total, 3u);  // a1 a2 a3
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(settled_parked_event_keeps_its_tag_until_finished_and_is_not_timed_out) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100), a2 = f.Push(100);
  REQUIRE(f.Take(s, 10).size() == 2);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  CHECK(f.CompleteAll(s, 2));
  CHECK(f.queue.SettleParked(a1));
  // Settled: the tag is still held (its worker delivers what a1 produced first), and a
  // timeout can no longer take it.
  CHECK_EQ(f.Take(other, 10).size(), 0u);
  std::vector<gsf::DroppedEvent> dropped;
  CHECK(!f.queue.TimeoutParked(a1, &dropped, nullptr));
  CHECK(dropped.empty());
  auto t = Timing(1, 0, 0, 0);
  CHECK_EQ(f.queue.FinishParked(a1, t.data()), gsf::kCompleteMadeReady);
  CHECK_EQ(Ids(f.Take(other, 10)), (std::vector<uint64_t>{a2}));
  CHECK(f.CompleteAll(other, 1));
  // Once timed out, it cannot be settled.
  uint64_t b1 = f.Push(200);
  REQUIRE(f.Take(s, 10).size() == 1);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  CHECK(f.CompleteAll(s, 1));
  CHECK(f.queue.TimeoutParked(b1, &dropped, nullptr));
  CHECK(!f.queue.SettleParked(b1));
  CHECK_EQ(f.queue.Stats().outstanding, 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(parked_timeout_inside_the_open_claim_cancels_the_skipped_events) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100), a2 = f.Push(100), b1 = f.Push(200);
  REQUIRE(f.Take(s, 10).size() == 3);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  std::vector<gsf::DroppedEvent> dropped;
  CHECK(f.queue.TimeoutParked(a1, &dropped, nullptr));
  CHECK_EQ(DroppedIds(dropped), (std::vector<uint64_t>{a2}));
  REQUIRE(f.Start(s, 2));
  CHECK_EQ(f.queue.Complete(s, 3, std::vector<double>(3 * gsf::kCompleteStride, 0.0).data()), gsf::kCompleteDone);
  uint64_t a3 = f.Push(100);
  CHECK_EQ(Ids(f.Take(other, 10)), (std::vector<uint64_t>{a3}));
  CHECK(f.CompleteAll(other, 1));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.completed_total, 2u);  // b1 a3
  CHECK_EQ(st.cancelled_total, 2u);  // a1 a2
  CHECK_EQ(f.queue.TagStateCount(), 0u);
  (void)b1;
}

TEST(ending_a_worker_abandons_its_parked_events_and_frees_their_tags) {
  QueueFixture f;
  int s = f.queue.SlotRegister(31), other = f.queue.SlotRegister(32);
  uint64_t a1 = f.Push(100, "", 1, 9), b1 = f.Push(200, "", 2), b2 = f.Push(200);
  REQUIRE(f.Take(s, 1).size() == 1);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  CHECK(f.CompleteAll(s, 1));
  REQUIRE(f.Take(s, 10).size() == 2);  // b1 b2
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));  // b1 parks too; b2 is skipped
  uint64_t a2 = f.Push(100);
  std::vector<gsf::AbandonedEvent> abandoned;
  CHECK_EQ(f.queue.SlotReleaseThread(31, &abandoned), 1);  // b2 requeued
  REQUIRE(abandoned.size() == 2);
  std::vector<uint64_t> ids{abandoned[0].id, abandoned[1].id};
  std::sort(ids.begin(), ids.end());
  CHECK_EQ(ids, (std::vector<uint64_t>{a1, b1}));
  CHECK_EQ(f.queue.ParkedCount(), 0u);
  auto got = f.Take(other, 10);
  std::vector<uint64_t> taken = Ids(got);
  std::sort(taken.begin(), taken.end());
  CHECK_EQ(taken, (std::vector<uint64_t>{b2, a2}));
  CHECK(f.CompleteAll(other, 2));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.cancelled_total, 2u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(timing_out_a_running_event_abandons_the_slot_parked_events) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100, "a1"), b1 = f.Push(200, "", 8), c1 = f.Push(300), a2 = f.Push(100);
  REQUIRE(f.Take(s, 10).size() == 4);  // a1 a2 b1 c1
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  REQUIRE(f.Start(s, 2));  // b1 hangs; a2 was skipped
  std::vector<gsf::DroppedEvent> dropped;
  std::vector<gsf::AbandonedEvent> abandoned;
  uint32_t name = 0;
  CHECK(f.queue.TimeoutSlot(s, b1, &dropped, &abandoned, &name));
  CHECK_EQ(name, 8u);
  REQUIRE(abandoned.size() == 1);
  CHECK_EQ(abandoned[0].id, a1);
  CHECK_EQ(abandoned[0].payload, std::string("a1"));
  CHECK_EQ(dropped.size(), 0u);
  auto got = Ids(f.Take(other, 10));
  std::sort(got.begin(), got.end());
  CHECK_EQ(got, (std::vector<uint64_t>{c1, a2}));
  CHECK(f.CompleteAll(other, 2));
  CHECK_EQ(f.queue.Stats().outstanding, 0u);
  CHECK_EQ(f.queue.SlotReleaseThread(1), 0);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

}  // namespace queue_parked_test
