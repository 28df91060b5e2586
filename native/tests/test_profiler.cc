#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../core/profiler.h"
#include "check.h"
#include "fake_clock.h"

namespace profiler_test {

using gsf::EventView;
using gsf::Profiler;
using gsf::ProfileSample;
using gsf::RunningStat;

namespace {

ProfileSample Sample(uint32_t name, double queue, double handler, double io, double rollbacks = 0) {
  ProfileSample s;
  s.name_id = name;
  s.queue_sec = queue;
  s.handler_sec = handler;
  s.io_wait_sec = io;
  s.rollbacks = rollbacks;
  return s;
}

struct Direct {
  double mean, stdev, max;
};

Direct Compute(const std::vector<double>& xs) {
  double sum = 0, mx = xs.empty() ? 0 : xs[0];
  for (double x : xs) {
    sum += x;
    mx = std::max(mx, x);
  }
  double mean = xs.empty() ? 0 : sum / static_cast<double>(xs.size());
  double ss = 0;
  for (double x : xs) ss += (x - mean) * (x - mean);
  return Direct{mean, xs.empty() ? 0 : std::sqrt(ss / static_cast<double>(xs.size())), mx};
}

void CheckStat(const gsf::StatView& got, const std::vector<double>& xs) {
  Direct d = Compute(xs);
  CHECK_NEAR(got.mean, d.mean, 1e-12);
  CHECK_NEAR(got.stdev, d.stdev, 1e-12);
  CHECK_NEAR(got.max, d.max, 1e-12);
}

}  // namespace

TEST(profiler_event_stats_match_direct_computation) {
  Profiler p;
  std::vector<double> q = {0.001, 0.004, 0.002, 0.010}, h = {0.5, 0.25, 0.125, 1.0}, io = {0, 0.3, 0.1, 0.05};
  std::vector<double> rb = {0, 3, 1, 0}, exec;
  for (size_t i = 0; i < q.size(); ++i) {
    ProfileSample s = Sample(7, q[i], h[i], io[i], rb[i]);
    s.objects = {static_cast<double>(i), 2, 0.5, 0.25, 0.125, 1};
    p.Record(s);
    exec.push_back(q[i] + h[i] + io[i]);
  }
  EventView v;
  REQUIRE(p.Event(7, &v));
  CHECK_EQ(v.all_time.count, 4u);
  CheckStat(v.all_time.queue, q);
  CheckStat(v.all_time.handler, h);
  CheckStat(v.all_time.io_wait, io);
  CheckStat(v.all_time.execution, exec);
  CHECK_NEAR(v.all_time.rollback_mean, 1.0, 1e-12);
  CHECK_EQ(v.all_time.rollback_max, 3.0);
  CHECK_NEAR(v.all_time.object_means[0], 1.5, 1e-12);
  CHECK_NEAR(v.all_time.object_means[5], 1.0, 1e-12);
  // Everything was recorded within the last minute.
  CHECK_EQ(v.last1min.count, 4u);
  CheckStat(v.last1min.execution, exec);
  gsf::SummaryView s = p.Summary();
  CHECK_EQ(s.all_time.count, 4u);
  CheckStat(s.all_time.execution, exec);
  CheckStat(s.all_time.io_wait, io);
  CheckStat(s.last1min.queue, q);
}

TEST(profiler_merge_matches_single_pass) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(0, 5);
  std::vector<double> xs;
  RunningStat whole, merged, part;
  for (int i = 0; i < 1000; ++i) {
    double x = dist(rng);
    xs.push_back(x);
    whole.Add(x);
    part.Add(x);
    if (i % 37 == 36) {  // uneven parts, like one-second buckets
      merged.Merge(part);
      part = RunningStat();
    }
  }
  merged.Merge(part);
  merged.Merge(RunningStat());  // merging an empty series is a no-op
  Direct d = Compute(xs);
  CHECK_EQ(merged.count, 1000u);
  CHECK_NEAR(merged.mean, d.mean, 1e-12);
  CHECK_NEAR(merged.Stdev(), d.stdev, 1e-12);
  CHECK_NEAR(merged.max, d.max, 0);
  CHECK_NEAR(merged.m2, whole.m2, 1e-9);
  // Chan et al. by hand for two tiny series: {1, 3} and {5}.
  RunningStat a, b;
  a.Add(1);
  a.Add(3);
  b.Add(5);
  a.Merge(b);
  CHECK_NEAR(a.mean, 3.0, 1e-15);
  CHECK_NEAR(a.m2, 8.0, 1e-12);  // (1-3)^2 + 0 + (5-3)^2
  CHECK_NEAR(a.Stdev(), std::sqrt(8.0 / 3.0), 1e-12);
}

TEST(profiler_last1min_merges_only_recent_seconds) {
  FakeClock clock(10000 * gsf::kNsPerSec);
  Profiler p;
  p.Record(Sample(1, 0, 1.0, 0));   // second 10000
  clock.AdvanceSec(30);
  p.Record(Sample(1, 0, 2.0, 0));   // second 10030
  p.Record(Sample(1, 0, 4.0, 0));
  clock.AdvanceSec(29);
  p.Record(Sample(1, 0, 8.0, 0));   // second 10059
  EventView v;
  REQUIRE(p.Event(1, &v));
  CHECK_EQ(v.last1min.count, 4u);
  CheckStat(v.last1min.handler, {1, 2, 4, 8});
  clock.AdvanceSec(1);  // second 10060: the bucket of 10000 has left the window
  REQUIRE(p.Event(1, &v));
  CHECK_EQ(v.last1min.count, 3u);
  CheckStat(v.last1min.handler, {2, 4, 8});
  CheckStat(v.all_time.handler, {1, 2, 4, 8});
  CHECK_EQ(p.Summary().last1min.count, 3u);
  // A bucket reused 60 s later starts from scratch.
  p.Record(Sample(1, 0, 16.0, 0));  // lands in the slot that held 10000
  REQUIRE(p.Event(1, &v));
  CheckStat(v.last1min.handler, {2, 4, 8, 16});
  clock.AdvanceSec(200);
  REQUIRE(p.Event(1, &v));
  CHECK_EQ(v.last1min.count, 0u);
  CHECK_EQ(v.last1min.handler.mean, 0.0);
  CHECK_EQ(v.all_time.count, 5u);
}

TEST(profiler_orders) {
  Profiler p;
  // name 1 "b": exec 1.0 x 4 = 4 (handler 1, io 0)
  for (int i = 0; i < 4; ++i) p.Record(Sample(1, 0, 1.0, 0));
  // name 2 "a": exec 3.0 x 1 = 3 (handler 0.5, io 2.5)
  p.Record(Sample(2, 0, 0.5, 2.5));
  // name 3 "c": exec 2.0 x 2 = 4 (handler 1.5, io 0.5): ties with "b" on the sum, broken by name
  for (int i = 0; i < 2; ++i) p.Record(Sample(3, 0, 1.5, 0.5));
  const char* names[] = {"", "b", "a", "c"};
  auto order = [&](gsf::ProfileOrder o) {
    std::vector<std::pair<std::string, EventView>> views;
    for (const EventView& v : p.All()) views.emplace_back(names[v.name_id], v);
    gsf::SortEventViews(views, o);
    std::vector<std::string> out;
    for (auto& kv : views) out.push_back(kv.first);
    return out;
  };
  using O = gsf::ProfileOrder;
  CHECK_EQ(order(O::kName), (std::vector<std::string>{"a", "b", "c"}));
  CHECK_EQ(order(O::kExecutionSum), (std::vector<std::string>{"b", "c", "a"}));
  CHECK_EQ(order(O::kHandlerSum), (std::vector<std::string>{"b", "c", "a"}));
  CHECK_EQ(order(O::kIoWaitSum), (std::vector<std::string>{"a", "c", "b"}));
  CHECK_EQ(order(O::kExecutionMean), (std::vector<std::string>{"a", "c", "b"}));
  CHECK_EQ(order(O::kHandlerMean), (std::vector<std::string>{"c", "b", "a"}));
  CHECK_EQ(order(O::kIoWaitMean), (std::vector<std::string>{"a", "c", "b"}));
}

TEST(profiler_timeouts_are_counted_but_not_timed) {
  Profiler p;
  p.Record(Sample(4, 0.1, 0.2, 0));
  p.RecordTimeout(4);
  p.RecordTimeout(4);
  p.RecordTimeout(9);  // a name that never completed still shows its timeouts
  p.RecordTimeout(0);  // unnamed: nowhere to count it
  EventView v;
  REQUIRE(p.Event(4, &v));
  CHECK_EQ(v.timeout_count, 2u);
  CHECK_EQ(v.all_time.count, 1u);
  CHECK_NEAR(v.all_time.execution.mean, 0.3, 1e-12);
  REQUIRE(p.Event(9, &v));
  CHECK_EQ(v.timeout_count, 1u);
  CHECK_EQ(v.all_time.count, 0u);
  CHECK_EQ(p.Summary().all_time.count, 1u);
  CHECK_EQ(p.All().size(), 2u);
}

TEST(profiler_empty_stats_are_zero) {
  Profiler p;
  gsf::SummaryView s = p.Summary();
  CHECK_EQ(s.all_time.count, 0u);
  CHECK_EQ(s.all_time.execution.mean, 0.0);
  CHECK_EQ(s.all_time.execution.stdev, 0.0);
  CHECK_EQ(s.last1min.queue.max, 0.0);
  EventView v;
  CHECK(!p.Event(3, &v));
  p.RecordTimeout(3);
  REQUIRE(p.Event(3, &v));
  CHECK(!std::isnan(v.all_time.object_means[0]));
  CHECK_EQ(v.all_time.object_means[0], 0.0);
  CHECK_EQ(v.all_time.rollback_mean, 0.0);
  // A single sample has no spread.
  p.Record(Sample(5, 1, 1, 1));
  REQUIRE(p.Event(5, &v));
  CHECK_EQ(v.all_time.execution.stdev, 0.0);
}

TEST(profiler_unnamed_events_count_in_summary_only) {
  Profiler p;
  p.Record(Sample(0, 0.5, 0.5, 0));
  CHECK_EQ(p.Summary().all_time.count, 1u);
  CHECK_EQ(p.All().size(), 0u);
}

TEST(profiler_enable_and_reset) {
  Profiler p;
  CHECK(p.Enabled());
  p.Record(Sample(1, 0, 1, 0));
  p.Enable(false);
  p.Record(Sample(1, 0, 1, 0));
  p.RecordTimeout(1);
  EventView v;
  REQUIRE(p.Event(1, &v));
  CHECK_EQ(v.all_time.count, 1u);  // recorded data is kept while off
  CHECK_EQ(v.timeout_count, 0u);
  p.Enable(true);
  ProfileSample batch[3] = {Sample(1, 0, 1, 0), Sample(2, 0, 1, 0), Sample(0, 0, 1, 0)};
  p.RecordBatch(batch, 3);
  REQUIRE(p.Event(1, &v));
  CHECK_EQ(v.all_time.count, 2u);
  CHECK_EQ(p.Summary().all_time.count, 4u);
  CHECK(!p.Resetting());
  p.Reset();
  CHECK(!p.Resetting());
  CHECK(!p.Event(1, &v));
  CHECK_EQ(p.All().size(), 0u);
  CHECK_EQ(p.Summary().all_time.count, 0u);
  CHECK_EQ(p.Summary().last1min.count, 0u);
}

}  // namespace profiler_test
