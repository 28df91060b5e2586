// Worker slots: registration, running view, timeouts and release of dead workers.
#include <vector>

#include "../core/errors.h"
#include "check.h"
#include "fake_clock.h"
#include "queue_helpers.h"

namespace worker_slots_test {

TEST(slots_register_takes_lowest_free_index) {
  QueueFixture f;
  CHECK_EQ(f.queue.SlotRegister(10), 0);
  CHECK_EQ(f.queue.SlotRegister(11), 1);
  CHECK_EQ(f.queue.SlotRegister(12), 2);
  CHECK_EQ(f.queue.SlotReleaseThread(11), 0);
  CHECK_EQ(f.queue.SlotReleaseThread(11), -1);
  CHECK_EQ(f.queue.SlotReleaseThread(999), -1);
  CHECK_EQ(f.queue.SlotRegister(13), 1);
  for (int i = 3; i < gsf::TagQueue::kMaxSlots; ++i) CHECK_EQ(f.queue.SlotRegister(100 + i), i);
  CHECK_THROWS(f.queue.SlotRegister(5000), gsf::StateError);
}

TEST(slots_running_lists_begun_events) {
  FakeClock clock;
  QueueFixture f;
  int s0 = f.queue.SlotRegister(7);
  int s1 = f.queue.SlotRegister(8);
  f.queue.SlotAttachTask(s0, 55);
  uint64_t a1 = f.Push(100, "", 3, 9, 1), a2 = f.Push(100, "", 4, 9, 1);
  f.Take(s0, 10);
  CHECK_EQ(f.queue.SlotsRunning().size(), 0u);  // claimed but not begun
  REQUIRE(f.Start(s0, 0));
  clock.AdvanceMs(7);
  auto running = f.queue.SlotsRunning();
  REQUIRE(running.size() == 1);
  CHECK_EQ(running[0].slot, s0);
  CHECK_EQ(running[0].thread_id, 7.0);
  CHECK_EQ(running[0].task_id, 55.0);
  CHECK_EQ(running[0].event_id, a1);
  CHECK_EQ(running[0].tag, 100u);
  CHECK_EQ(running[0].name_id, 3u);
  CHECK_EQ(running[0].session_id, 9u);
  CHECK_EQ(running[0].kind, 1);
  CHECK_NEAR(running[0].elapsed_ms, 7.0, 1e-9);
  REQUIRE(f.Start(s0, 1));
  running = f.queue.SlotsRunning();
  REQUIRE(running.size() == 1);
  CHECK_EQ(running[0].event_id, a2);
  CHECK_NEAR(running[0].elapsed_ms, 0.0, 1e-9);
  f.CompleteAll(s0, 2);
  CHECK_EQ(f.queue.SlotsRunning().size(), 0u);
  (void)s1;
}

TEST(timeout_drops_tag_and_requeues_other_events_at_front) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100, "", 5), a2 = f.Push(100), b1 = f.Push(200, "b1"), b2 = f.Push(200, "b2");
  REQUIRE(f.Take(s, 10).size() == 4);
  uint64_t a3 = f.Push(100), b3 = f.Push(200), c1 = f.Push(300);
  CHECK_EQ(Ids(f.Take(other, 10)), (std::vector<uint64_t>{c1}));
  REQUIRE(f.Start(s, 0));  // a1 runs and hangs

  std::vector<gsf::DroppedEvent> dropped;
  CHECK(!f.queue.TimeoutSlot(s, a2, &dropped));  // a2 is not the running event
  CHECK(!f.queue.TimeoutSlot(other, c1, &dropped));  // c1 was never begun
  gsf::DroppedEvent timed_out{};
  CHECK(f.queue.TimeoutSlot(s, a1, &dropped, nullptr, nullptr, &timed_out));
  CHECK_EQ(timed_out.id, a1);
  CHECK_EQ(timed_out.tag, 100u);
  CHECK_EQ(timed_out.name_id, 5u);
  // The claimed-but-unstarted a2 first, then the queued a3; a1 itself is not listed.
  CHECK_EQ(DroppedIds(dropped), (std::vector<uint64_t>{a2, a3}));
  CHECK(!f.queue.TimeoutSlot(s, a1, &dropped));  // already timed out
  CHECK(!f.queue.TimeoutSlot(200, a1, &dropped));  // a slot nobody holds
  CHECK_THROWS(f.queue.TimeoutSlot(-1, a1, &dropped), gsf::ArgumentError);

  // The revoked slot is inert until its thread is released.
  CHECK_EQ(f.Take(s, 10).size(), 0u);
  int64_t r = 0;
  f.Take(s, 10, 64, &r);
  CHECK_EQ(r, -1);
  CHECK(!f.Start(s, 1));
  CHECK(!f.CompleteAll(s, 4));

  gsf::EventView v;
  REQUIRE(f.profiler.Event(5, &v));
  CHECK_EQ(v.timeout_count, 1u);
  CHECK_EQ(v.all_time.count, 0u);

  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.cancelled_total, 3u);  // a1, a2, a3
  CHECK_EQ(st.outstanding, 1u);      // c1 on the other slot
  CHECK_EQ(st.waiting, 3u);          // b1, b2, b3

  f.CompleteAll(other, 1);
  uint64_t a4 = f.Push(100);  // the tag is free again
  auto got = f.Take(other, 10);
  CHECK_EQ(Ids(got), (std::vector<uint64_t>{b1, b2, b3, a4}));
  REQUIRE(got.size() == 4);
  CHECK_EQ(got[0].payload, std::string("b1"));
  f.CompleteAll(other, 4);

  CHECK_EQ(f.queue.SlotReleaseThread(1), 0);
  CHECK_EQ(f.queue.SlotRegister(3), s);
  uint64_t d1 = f.Push(400);
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{d1}));
}

TEST(timeout_counts_earlier_begun_events_as_completed) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100), b1 = f.Push(200), c1 = f.Push(300);
  f.Take(s, 10);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.Start(s, 1));
  std::vector<gsf::DroppedEvent> dropped;
  CHECK(f.queue.TimeoutSlot(s, b1, &dropped));
  CHECK_EQ(dropped.size(), 0u);
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.completed_total, 1u);
  CHECK_EQ(st.cancelled_total, 1u);
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(Ids(f.Take(other, 10)), (std::vector<uint64_t>{c1}));
  (void)a1;
}

TEST(release_thread_requeues_unstarted_events_in_order) {
  QueueFixture f;
  int s = f.queue.SlotRegister(21), other = f.queue.SlotRegister(22);
  uint64_t a1 = f.Push(100, "one", 4, 100, 2, 9), a2 = f.Push(100, "two"), a3 = f.Push(100), b1 = f.Push(200);
  REQUIRE(f.Take(s, 3).size() == 3);
  uint64_t a4 = f.Push(100);
  REQUIRE(f.Start(s, 0));
  gsf::DroppedEvent lost{};
  CHECK_EQ(f.queue.SlotReleaseThread(21, nullptr, &lost), 2);
  // The begun a1 never finishes: reported whole, its payload included (a client's frame is answered).
  CHECK_EQ(lost.id, a1);
  CHECK_EQ(lost.tag, 100u);
  CHECK_EQ(lost.name_id, 4u);
  CHECK_EQ(lost.session_id, 100u);
  CHECK_EQ(lost.handler_id, 9u);
  CHECK_EQ(lost.payload, std::string("one"));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.cancelled_total, 1u);  // the begun a1
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.waiting, 4u);
  // The requeued tag is ready before b1, which was pushed after its events.
  auto got = f.Take(other, 10);
  CHECK_EQ(Ids(got), (std::vector<uint64_t>{a2, a3, a4, b1}));
  CHECK_EQ(got[0].payload, std::string("two"));
  CHECK_THROWS(f.queue.Take(s, nullptr, 0, nullptr, 0), gsf::StateError);  // slot is free now
}

TEST(release_thread_frees_every_slot_of_the_thread) {
  QueueFixture f;
  int s1 = f.queue.SlotRegister(5), s2 = f.queue.SlotRegister(5);
  f.Push(100);
  f.Push(200);
  f.Take(s1, 1);
  f.Take(s2, 1);
  CHECK(f.queue.ThreadHasSlot(5));
  CHECK(!f.queue.ThreadHasSlot(6));
  CHECK_EQ(f.queue.SlotReleaseThread(5), 2);
  CHECK(!f.queue.ThreadHasSlot(5));
  CHECK_EQ(f.queue.SlotRegister(6), 0);
  CHECK_EQ(f.queue.SlotRegister(6), 1);
}

TEST(retired_thread_takes_nothing_new_and_finishes_its_claim) {
  QueueFixture f;
  int old_slot = f.queue.SlotRegister(5), new_slot = f.queue.SlotRegister(6);
  uint64_t a1 = f.Push(100), a2 = f.Push(100), b1 = f.Push(200);
  auto claim = f.Take(old_slot, 1);  // a1 only
  REQUIRE(claim.size() == 1);
  CHECK_EQ(claim[0].id, a1);
  CHECK_EQ(f.queue.SlotRetireThread(5), size_t{1});
  CHECK_EQ(f.queue.SlotRetireThread(999), size_t{0});
  REQUIRE(f.Start(old_slot, 0));
  CHECK(f.CompleteAll(old_slot, 1));  // the claim it held completes as usual
  int64_t n = -5;
  CHECK(f.Take(old_slot, 10, 4096, &n).empty());
  CHECK_EQ(n, 0);  // nothing, not "revoked": the worker goes on finishing what it awaits
  // The new slot gets everything that was queued, in order.
  auto rest = f.Take(new_slot, 10);
  CHECK(Ids(rest) == (std::vector<uint64_t>{b1, a2}) || Ids(rest) == (std::vector<uint64_t>{a2, b1}));
  CHECK(f.CompleteAll(new_slot, rest.size()));
  // A slot registered again (a new worker in it) is not retired.
  CHECK_EQ(f.queue.SlotReleaseThread(5), 0);
  int again = f.queue.SlotRegister(7);
  CHECK_EQ(again, old_slot);
  uint64_t c1 = f.Push(300);
  CHECK(Ids(f.Take(again, 10)) == std::vector<uint64_t>{c1});
}

}  // namespace worker_slots_test
