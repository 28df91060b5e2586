// Timers fire as timer-tag events in due order, once per period, without bursts.
#include <atomic>
#include <vector>

#include "../core/timer_store.h"
#include "check.h"
#include "fake_clock.h"
#include "queue_helpers.h"

namespace timer_store_test {

namespace {

struct TimerFixture : QueueFixture {
  gsf::TimerStore timers{&queue, &wake};
  int slot = queue.SlotRegister(1);

  uint64_t Add(double delay, double interval, uint32_t name, const std::string& payload = "") {
    return timers.Add(delay, interval, name, name + 100, reinterpret_cast<const uint8_t*>(payload.data()),
                      payload.size());
  }
  /** Names of the timer events queued so far, in order; consumes them. */
  std::vector<uint32_t> Drain() {
    std::vector<uint32_t> names;
    auto got = Take(slot, 1000);
    for (const Taken& t : got) names.push_back(t.name_id);
    CompleteAll(slot, got.size());
    return names;
  }
};

}  // namespace

TEST(timer_one_shot_fires_once_as_timer_event) {
  FakeClock clock;
  TimerFixture f;
  uint64_t id = f.Add(10, 0, 7, "pay");
  CHECK_EQ(f.timers.Count(), 1u);
  clock.AdvanceMs(4);
  CHECK_EQ(f.timers.Fire(), 6);
  CHECK_EQ(f.queue.Waiting(), 0u);
  clock.AdvanceMs(5.5);
  CHECK_EQ(f.timers.Fire(), 1);  // 0.5 ms left rounds up, so the caller never wakes early
  clock.AdvanceMs(0.5);
  CHECK_EQ(f.timers.Fire(), -1);
  auto got = f.Take(f.slot, 10);
  REQUIRE(got.size() == 1);
  CHECK_EQ(got[0].tag, gsf::kTimerTag);
  CHECK_EQ(got[0].kind, static_cast<int>(gsf::kKindTimer));
  CHECK_EQ(got[0].name_id, 7u);
  CHECK_EQ(got[0].handler_id, 107u);
  CHECK_EQ(got[0].session_id, 0u);
  CHECK_EQ(got[0].payload, std::string("pay"));
  CHECK_EQ(f.timers.Count(), 0u);
  CHECK(!f.timers.Cancel(id));
}

TEST(timer_added_after_stop_is_not_started_and_counted_until_clear) {
  FakeClock clock;
  TimerFixture f;
  uint64_t before = f.Add(0, 10, 1);
  uint64_t reserved = f.timers.Reserve();
  f.timers.Stop();
  CHECK_EQ(f.Add(0, 0, 2), 0u);
  CHECK_EQ(f.timers.Add(0, 0, 3, 103, nullptr, 0, reserved), 0u);  // a held timer's reservation ends too
  CHECK_EQ(f.timers.RefusedAtStop(), 2u);
  CHECK_EQ(f.timers.Count(), 1u);  // what was there stays until the stop's reset
  CHECK(f.timers.Cancel(before));
  CHECK_EQ(f.timers.Clear(), 0u);
  CHECK(f.Add(0, 0, 4) != 0u);  // the next start takes timers again
  CHECK_EQ(f.timers.RefusedAtStop(), 2u);
  CHECK_EQ(f.timers.Fire(), -1);
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{4}));
}

TEST(timer_zero_delay_is_due_at_once) {
  FakeClock clock;
  TimerFixture f;
  f.Add(0, 0, 1);
  f.Add(-5, 0, 2);  // negative delays count as zero
  CHECK_EQ(f.timers.Fire(), -1);
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{1, 2}));
}

TEST(timer_repeating_skips_missed_periods) {
  FakeClock clock;
  TimerFixture f;
  f.Add(10, 10, 3);
  clock.AdvanceMs(10);
  CHECK_EQ(f.timers.Fire(), 10);
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{3}));
  clock.AdvanceMs(45);  // now 55: periods at 20, 30, 40, 50 are due
  CHECK_EQ(f.timers.Fire(), 5);  // one firing, next at 60
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{3}));
  clock.AdvanceMs(5);
  CHECK_EQ(f.timers.Fire(), 10);
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{3}));
  CHECK_EQ(f.timers.Count(), 1u);
}

TEST(timer_fire_order_is_due_order) {
  FakeClock clock;
  TimerFixture f;
  f.Add(30, 0, 30);
  f.Add(10, 0, 10);
  f.Add(20, 0, 20);
  f.Add(15, 0, 151);
  f.Add(15, 0, 152);  // same due time: add order
  f.Add(50, 0, 50);
  clock.AdvanceMs(40);
  CHECK_EQ(f.timers.Fire(), 10);
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{10, 151, 152, 20, 30}));
}

TEST(timer_cancel) {
  FakeClock clock;
  TimerFixture f;
  uint64_t rep = f.Add(10, 10, 1);
  uint64_t one = f.Add(5, 0, 2);
  CHECK(f.timers.Cancel(rep));
  CHECK(!f.timers.Cancel(rep));
  CHECK(!f.timers.Cancel(123456));
  CHECK_EQ(f.timers.Count(), 1u);
  clock.AdvanceMs(30);
  CHECK_EQ(f.timers.Fire(), -1);
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{2}));
  CHECK(!f.timers.Cancel(one));
  // Many cancellations compact the heap without losing live timers.
  std::vector<uint64_t> ids;
  for (uint32_t i = 0; i < 300; ++i) ids.push_back(f.Add(100 + i, 0, 1000 + i));
  for (size_t i = 0; i + 1 < ids.size(); ++i) CHECK(f.timers.Cancel(ids[i]));
  CHECK_EQ(f.timers.Count(), 1u);
  clock.AdvanceMs(1000);
  CHECK_EQ(f.timers.Fire(), -1);
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{1299}));
}

TEST(timer_clear_drops_everything) {
  FakeClock clock;
  TimerFixture f;
  f.Add(10, 10, 1);
  f.Add(0, 0, 2);
  CHECK_EQ(f.timers.Clear(), 2u);
  CHECK_EQ(f.timers.Count(), 0u);
  clock.AdvanceMs(100);
  CHECK_EQ(f.timers.Fire(), -1);
  CHECK_EQ(f.queue.Waiting(), 0u);
  uint64_t id = f.Add(5, 0, 3);  // still usable afterwards
  clock.AdvanceMs(5);
  f.timers.Fire();
  CHECK_EQ(f.Drain(), (std::vector<uint32_t>{3}));
  CHECK(!f.timers.Cancel(id));
}

TEST(timer_add_wakes_only_for_an_earlier_due_time) {
  FakeClock clock;
  TimerFixture f;
  std::atomic<int> calls{0};
  f.wake.SetSink([&] { calls++; });
  auto arm = [&] { f.wake.Arm([&] { return f.queue.HasReady(); }); };
  arm();
  f.Add(100, 0, 1);
  CHECK_EQ(calls.load(), 1);
  arm();
  f.Add(200, 0, 2);
  CHECK_EQ(calls.load(), 1);
  f.Add(50, 0, 3);
  CHECK_EQ(calls.load(), 2);
  arm();
  clock.AdvanceMs(60);
  f.timers.Fire();  // pushing the due timer wakes through the queue
  CHECK_EQ(calls.load(), 3);
}

TEST(timer_reserved_id_is_added_later_or_cancelled_first) {
  FakeClock clock;
  TimerFixture f;
  // A held timer: its id exists at once, the timer only when it is added with it.
  uint64_t held = f.timers.Reserve();
  uint64_t other = f.Add(5, 0, 8);
  CHECK(held != other);
  CHECK_EQ(f.timers.Count(), 1u);
  CHECK_EQ(f.timers.Add(5, 0, 9, 109, nullptr, 0, held), held);
  CHECK_EQ(f.timers.Count(), 2u);
  clock.AdvanceMs(5);
  f.timers.Fire();
  CHECK(f.Drain() == std::vector<uint32_t>({8, 9}));
  // Cancelled while held: adding it later adds nothing.
  uint64_t cancelled = f.timers.Reserve();
  CHECK(f.timers.Cancel(cancelled));
  CHECK(!f.timers.Cancel(cancelled));
  CHECK_EQ(f.timers.Add(1, 0, 10, 110, nullptr, 0, cancelled), 0u);
  // Released (its event was dropped): the same.
  uint64_t released = f.timers.Reserve();
  f.timers.Release(released);
  CHECK_EQ(f.timers.Add(1, 0, 11, 111, nullptr, 0, released), 0u);
  CHECK(!f.timers.Cancel(released));
  clock.AdvanceMs(10);
  CHECK_EQ(f.timers.Fire(), -1);
  CHECK(f.Drain().empty());
}

TEST(timer_interval_below_one_ns_still_repeats) {
  FakeClock clock;
  TimerFixture f;
  uint64_t id = f.Add(0, 1e-9, 12);
  f.timers.Fire();
  CHECK_EQ(f.Drain().size(), 1u);
  clock.AdvanceMs(1);
  f.timers.Fire();
  CHECK_EQ(f.Drain().size(), 1u);
  CHECK(f.timers.Cancel(id));
}

TEST(timer_repeating_skips_periods_behind_a_full_backlog) {
  FakeClock clock;
  TimerFixture f;
  f.Add(1, 1, 7);  // every ms; nothing runs the events
  for (uint64_t i = 0; i < gsf::TimerStore::kMaxBacklog + 50; ++i) {
    clock.AdvanceMs(1);
    f.timers.Fire();
  }
  CHECK_EQ(f.queue.TagWaiting(gsf::kTimerTag), gsf::TimerStore::kMaxBacklog);
  CHECK_EQ(f.timers.SkippedTotal(), 50u);
  // A one-shot timer still fires behind the backlog.
  f.Add(1, 0, 8);
  clock.AdvanceMs(1);
  f.timers.Fire();
  CHECK_EQ(f.queue.TagWaiting(gsf::kTimerTag), gsf::TimerStore::kMaxBacklog + 1);
  CHECK_EQ(f.timers.SkippedTotal(), 51u);
  // Once the backlog is worked off, every period fires again.
  std::vector<uint32_t> names = f.Drain(), rest = f.Drain();  // a take holds 1000 at most
  names.insert(names.end(), rest.begin(), rest.end());
  CHECK_EQ(names.size(), static_cast<size_t>(gsf::TimerStore::kMaxBacklog + 1));
  CHECK_EQ(names.back(), 8u);
  clock.AdvanceMs(1);
  f.timers.Fire();
  CHECK_EQ(f.queue.TagWaiting(gsf::kTimerTag), 1u);
  CHECK_EQ(f.timers.SkippedTotal(), 51u);
}

}  // namespace timer_store_test
