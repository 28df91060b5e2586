// The profiler's fixed-bucket latency histograms (exported to Prometheus).
#include <array>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "../core/profiler.h"
#include "check.h"

namespace profiler_histogram_test {

using gsf::EventHistograms;
using gsf::kHistogramBounds;
using gsf::kHistogramBuckets;
using gsf::Profiler;
using gsf::ProfileSample;

namespace {

ProfileSample Sample(uint32_t name, double queue, double handler, double io) {
  ProfileSample s;
  s.name_id = name;
  s.queue_sec = queue;
  s.handler_sec = handler;
  s.io_wait_sec = io;
  return s;
}

const EventHistograms* Find(const std::vector<EventHistograms>& all, uint32_t name) {
  for (const EventHistograms& h : all) {
    if (h.name_id == name) return &h;
  }
  return nullptr;
}

uint64_t Total(const gsf::HistogramView& v) {
  uint64_t n = 0;
  for (uint64_t c : v.buckets) n += c;
  return n;
}

}  // namespace

TEST(histogram_bucket_is_the_first_bound_at_or_above_the_value) {
  CHECK_EQ(gsf::HistogramBucket(0), 0u);
  CHECK_EQ(gsf::HistogramBucket(0.0005), 0u);    // le is inclusive
  CHECK_EQ(gsf::HistogramBucket(0.00050001), 1u);
  CHECK_EQ(gsf::HistogramBucket(0.003), 3u);     // (0.0025, 0.005]
  CHECK_EQ(gsf::HistogramBucket(10), 13u);
  CHECK_EQ(gsf::HistogramBucket(10.5), 14u);     // above every bound
  CHECK_EQ(gsf::HistogramBucket(1e9), kHistogramBuckets - 1);
  for (size_t i = 0; i < kHistogramBounds.size(); ++i) CHECK_EQ(gsf::HistogramBucket(kHistogramBounds[i]), i);
}

TEST(histograms_count_each_time_in_its_bucket_and_sum_it) {
  Profiler p;
  // execution = queue + handler + io_wait
  p.Record(Sample(3, 0.0001, 0.0002, 0));      // exec 0.0003 → bucket 0
  p.Record(Sample(3, 0.002, 0.001, 0.004));    // exec 0.007 → bucket 4 (0.005, 0.01]
  p.Record(Sample(3, 0.2, 0.3, 12));           // exec 12.5 → overflow
  p.Record(Sample(5, 0.0001, 0.0001, 0));      // another name
  std::vector<EventHistograms> all = p.Histograms();
  REQUIRE(all.size() == 2u);
  const EventHistograms* h = Find(all, 3);
  REQUIRE(h != nullptr);
  CHECK_EQ(h->count, 3u);
  std::array<uint64_t, kHistogramBuckets> exec{};
  exec[0] = 1;
  exec[4] = 1;
  exec[14] = 1;
  CHECK(h->execution.buckets == exec);
  std::array<uint64_t, kHistogramBuckets> queue{};
  queue[0] = 1;  // 0.0001
  queue[2] = 1;  // 0.002
  queue[8] = 1;  // 0.2
  CHECK(h->queue.buckets == queue);
  std::array<uint64_t, kHistogramBuckets> io{};
  io[0] = 1;   // 0
  io[3] = 1;   // 0.004
  io[14] = 1;  // 12
  CHECK(h->io_wait.buckets == io);
  std::array<uint64_t, kHistogramBuckets> handler{};
  handler[0] = 1;  // 0.0002
  handler[1] = 1;  // 0.001
  handler[9] = 1;  // 0.3
  CHECK(h->handler.buckets == handler);
  CHECK_NEAR(h->execution.sum, 0.0003 + 0.007 + 12.5, 1e-9);
  CHECK_NEAR(h->queue.sum, 0.2021, 1e-12);
  CHECK_NEAR(h->handler.sum, 0.3012, 1e-12);
  CHECK_NEAR(h->io_wait.sum, 12.004, 1e-9);
  CHECK_EQ(Find(all, 5)->count, 1u);
}

TEST(histograms_agree_with_the_statistics_under_concurrent_batches) {
  Profiler p;
  constexpr int kThreads = 4, kBatches = 200, kBatch = 37;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&p, t] {
      std::mt19937 rng(static_cast<uint32_t>(t + 1));
      std::exponential_distribution<double> latency(200.0);  // mean 5 ms
      std::vector<ProfileSample> batch;
      for (int b = 0; b < kBatches; ++b) {
        batch.clear();
        for (int i = 0; i < kBatch; ++i) batch.push_back(Sample(1 + (i % 3), latency(rng), latency(rng), latency(rng) / 4));
        p.RecordBatch(batch.data(), batch.size());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  uint64_t total = 0;
  for (const EventHistograms& h : p.Histograms()) {
    gsf::EventView v;
    REQUIRE(p.Event(h.name_id, &v));
    CHECK_EQ(h.count, v.all_time.count);
    for (const gsf::HistogramView* m : {&h.execution, &h.handler, &h.io_wait, &h.queue}) CHECK_EQ(Total(*m), h.count);
    CHECK_NEAR(h.execution.sum, v.all_time.execution.mean * static_cast<double>(v.all_time.count), 1e-6);
    total += h.count;
  }
  CHECK_EQ(total, static_cast<uint64_t>(kThreads * kBatches * kBatch));
}

TEST(histograms_leave_out_timeouts_and_unnamed_events_and_clear_on_reset) {
  Profiler p;
  p.Record(Sample(0, 0.001, 0.001, 0));  // unnamed: summary only
  p.RecordTimeout(4);                     // a timeout: no time recorded
  p.Record(Sample(4, 0.001, 0.001, 0));
  std::vector<EventHistograms> all = p.Histograms();
  REQUIRE(all.size() == 1u);
  CHECK_EQ(all[0].name_id, 4u);
  CHECK_EQ(all[0].count, 1u);
  CHECK_EQ(Total(all[0].execution), 1u);
  p.Reset();
  CHECK(p.Histograms().empty());
  p.Enable(false);
  p.Record(Sample(4, 0.001, 0.001, 0));
  CHECK(p.Histograms().empty());
}

}  // namespace profiler_histogram_test
