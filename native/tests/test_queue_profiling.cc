// What the queue reports: profile samples recorded by complete, per-second rates, wake-ups.
#include <atomic>
#include <thread>
#include <vector>

#include "check.h"
#include "fake_clock.h"
#include "queue_helpers.h"

namespace queue_profiling_test {

namespace {

std::vector<double> Timings(size_t n) { return std::vector<double>(n * gsf::kCompleteStride, 0.0); }

double* Rec(std::vector<double>& t, size_t i) { return &t[i * gsf::kCompleteStride]; }

}  // namespace

TEST(complete_records_profile_samples_under_the_final_name) {
  FakeClock clock;
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  f.Push(100, "", /*name_id=*/1);
  f.Push(100, "", 1);
  f.Push(200, "", 1);
  clock.AdvanceMs(2);
  REQUIRE(f.Take(s, 10).size() == 3);
  double start0 = -1, start1 = -1;
  REQUIRE(f.Start(s, 0, &start0));
  clock.AdvanceMs(4);
  REQUIRE(f.Start(s, 1, &start1));
  CHECK_NEAR(start1, 4.0, 1e-9);
  auto t = Timings(3);
  Rec(t, 0)[gsf::kStartMs] = start0;
  Rec(t, 1)[gsf::kStartMs] = start1;
  Rec(t, 0)[gsf::kHandlerMs] = 3;
  Rec(t, 0)[gsf::kIoWaitMs] = 1;
  Rec(t, 0)[gsf::kNameId] = 2;  // the handler renamed the event
  Rec(t, 0)[gsf::kRollbacks] = 2;
  Rec(t, 0)[gsf::kObjectCreateCount] = 4;
  Rec(t, 0)[gsf::kObjectCacheHitRate] = -0.5;
  Rec(t, 1)[gsf::kHandlerMs] = 1;
  Rec(t, 1)[gsf::kNameId] = 0;  // unnamed: summary only
  Rec(t, 2)[gsf::kFlags] = gsf::kFlagNotRun;
  Rec(t, 2)[gsf::kNameId] = 2;
  CHECK(f.queue.Complete(s, 3, t.data()));

  gsf::EventView v;
  REQUIRE(f.profiler.Event(2, &v));
  CHECK_EQ(v.all_time.count, 1u);
  CHECK_NEAR(v.all_time.queue.mean, 0.002, 1e-12);
  CHECK_NEAR(v.all_time.handler.mean, 0.003, 1e-12);
  CHECK_NEAR(v.all_time.io_wait.mean, 0.001, 1e-12);
  CHECK_NEAR(v.all_time.execution.mean, 0.006, 1e-12);
  CHECK_EQ(v.all_time.rollback_max, 2.0);
  CHECK_EQ(v.all_time.object_means[0], 4.0);
  CHECK_EQ(v.all_time.object_means[2], -0.5);
  CHECK(!f.profiler.Event(1, &v));  // the pushed name got no sample

  gsf::SummaryView sum = f.profiler.Summary();
  CHECK_EQ(sum.all_time.count, 2u);  // the not-run event is not profiled
  CHECK_NEAR(sum.all_time.queue.max, 0.006, 1e-12);
  CHECK_NEAR(sum.all_time.execution.max, 0.007, 1e-12);
  CHECK_EQ(f.queue.Stats().completed_total, 3u);
}

TEST(complete_records_nothing_while_profiler_is_off) {
  QueueFixture f;
  f.profiler.Enable(false);
  int s = f.queue.SlotRegister(1);
  f.Push(100, "", 1);
  f.Take(s, 1);
  REQUIRE(f.Start(s, 0));
  auto t = Timings(1);
  Rec(t, 0)[gsf::kNameId] = 1;
  CHECK(f.queue.Complete(s, 1, t.data()));
  CHECK_EQ(f.profiler.Summary().all_time.count, 0u);
  f.profiler.Enable(true);
  f.Push(100, "", 1);
  f.Take(s, 1);
  CHECK(f.queue.Complete(s, 1, t.data()));
  CHECK_EQ(f.profiler.Summary().all_time.count, 1u);
}

TEST(stats_report_last_whole_second) {
  FakeClock clock(500 * gsf::kNsPerSec);
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  for (int i = 0; i < 3; ++i) f.Push(100 + i);
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.inflow_per_sec, 0u);  // second 500 is not over yet
  CHECK_EQ(st.waiting, 3u);
  clock.AdvanceSec(1);
  st = f.queue.Stats();
  CHECK_EQ(st.inflow_per_sec, 3u);
  CHECK_EQ(st.throughput_per_sec, 0u);
  auto got = f.Take(s, 2);
  CHECK_EQ(f.queue.Stats().outstanding, 2u);
  CHECK(f.CompleteAll(s, got.size()));
  f.Push(200);
  clock.AdvanceSec(1);
  st = f.queue.Stats();
  CHECK_EQ(st.inflow_per_sec, 1u);
  CHECK_EQ(st.throughput_per_sec, 2u);
  CHECK_EQ(st.waiting, 2u);
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.pushed_total, 4u);
  CHECK_EQ(st.completed_total, 2u);
  clock.AdvanceSec(2);
  st = f.queue.Stats();
  CHECK_EQ(st.inflow_per_sec, 0u);
  CHECK_EQ(st.throughput_per_sec, 0u);
}

TEST(wake_fires_once_per_arm_on_push) {
  QueueFixture f;
  std::atomic<int> calls{0};
  f.wake.SetSink([&] { calls++; });
  f.Push(100);  // not armed: nothing
  CHECK_EQ(calls.load(), 0);
  int s = f.queue.SlotRegister(1);
  f.CompleteAll(s, f.Take(s, 10).size());
  f.wake.Arm([&] { return f.queue.HasReady(); });
  CHECK_EQ(calls.load(), 0);
  f.Push(100);
  f.Push(101);
  CHECK_EQ(calls.load(), 1);
  // Work is already waiting: arming fires at once.
  f.wake.Arm([&] { return f.queue.HasReady(); });
  CHECK_EQ(calls.load(), 2);
  CHECK(!f.wake.Armed());
}

TEST(wake_fires_when_complete_makes_a_tag_ready) {
  QueueFixture f;
  std::atomic<int> calls{0};
  f.wake.SetSink([&] { calls++; });
  int s = f.queue.SlotRegister(1);
  f.Push(100);
  f.Take(s, 10);
  f.Push(100);  // queued behind the claim: nothing can be taken yet
  f.wake.Arm([&] { return f.queue.HasReady(); });
  CHECK_EQ(calls.load(), 0);
  f.CompleteAll(s, 1);
  CHECK_EQ(calls.load(), 1);
}

TEST(wake_racing_pushes_fire_exactly_once) {
  for (int round = 0; round < 50; ++round) {
    QueueFixture f;
    std::atomic<int> calls{0};
    f.wake.SetSink([&] { calls++; });
    f.wake.Arm([&] { return f.queue.HasReady(); });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&f, t] {
        for (int i = 0; i < 50; ++i) f.Push(static_cast<uint64_t>(t * 1000 + i));
      });
    }
    for (auto& th : threads) th.join();
    CHECK_EQ(calls.load(), 1);
  }
}

}  // namespace queue_profiling_test
