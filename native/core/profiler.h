// Event profiling statistics (SPEC 2.6): all-time and last-minute windows.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gsf {

/**
 * Count, mean, sum of squared deviations and max of a series. Kept in Welford
 * form so a 60-bucket window can be merged without losing precision.
 */
struct RunningStat {
  uint64_t count = 0;
  double mean = 0;
  double m2 = 0;
  double max = 0;

  void Add(double x);
  /** Chan et al. parallel combination of two series. */
  void Merge(const RunningStat& other);
  /** Population standard deviation; 0 for an empty series. */
  double Stdev() const;
};

/** One finished event, times in seconds. */
struct ProfileSample {
  uint32_t name_id = 0;
  double queue_sec = 0;
  double handler_sec = 0;
  double io_wait_sec = 0;
  double rollbacks = 0;
  // object_create_count, object_count, cache_hit_rate, nolock_rate, lease_rate, null_rate
  std::array<double, 6> objects{};
};

struct StatView {
  double mean = 0;
  double stdev = 0;
  double max = 0;
};

struct SummaryWindow {
  uint64_t count = 0;
  StatView execution, io_wait, queue;
};

struct EventWindow {
  uint64_t count = 0;
  double rollback_mean = 0;
  double rollback_max = 0;
  StatView execution, handler, io_wait, queue;
  std::array<double, 6> object_means{};
};

struct SummaryView {
  SummaryWindow all_time, last1min;
};

struct EventView {
  uint32_t name_id = 0;
  EventWindow all_time, last1min;
  uint64_t timeout_count = 0;  // all-time only
};

/**
 * Upper bounds (seconds) of the fixed latency histogram buckets, for Prometheus: from half a
 * millisecond, where a game message's handling starts, to 10 s, past which an event is a stall.
 * One more bucket counts everything above the last bound.
 */
constexpr std::array<double, 14> kHistogramBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,    0.25,  0.5,    1,     2.5,   5,    10};
constexpr size_t kHistogramBuckets = kHistogramBounds.size() + 1;

/** The bucket of a value: the first whose bound is >= it (Prometheus `le`), or the overflow bucket. */
inline size_t HistogramBucket(double seconds) {
  size_t i = 0;
  // Most events are fast, so a scan from the smallest bound ends early.
  while (i < kHistogramBounds.size() && seconds > kHistogramBounds[i]) ++i;
  return i;
}

/** Per-bucket counts (not cumulative) and the sum of one time metric of one event name. */
struct HistogramView {
  std::array<uint64_t, kHistogramBuckets> buckets{};
  double sum = 0;
};

/** All-time latency histograms of one event name, in SPEC 2.6's four times. */
struct EventHistograms {
  uint32_t name_id = 0;
  uint64_t count = 0;
  HistogramView execution, handler, io_wait, queue;
};

/** profilerAll orders (SPEC 4.5). */
enum class ProfileOrder : int {
  kName = 0,
  kExecutionSum = 1,
  kHandlerSum = 2,
  kIoWaitSum = 3,
  kExecutionMean = 4,
  kHandlerMean = 5,
  kIoWaitMean = 6,
};

class Profiler {
 public:
  static constexpr int kWindowSec = 60;

  Profiler();
  ~Profiler();

  void Enable(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  bool Enabled() const { return enabled_.load(std::memory_order_relaxed); }
  /** Drops every statistic; Resetting() is true meanwhile. */
  void Reset();
  bool Resetting() const { return resetting_.load(); }

  void Record(const ProfileSample& sample) { RecordBatch(&sample, 1); }
  /** Records many samples under one lock acquisition (the `complete` path). */
  void RecordBatch(const ProfileSample* samples, size_t n);
  /** Counts a timeout for the name; timed-out runs never enter the time statistics. */
  void RecordTimeout(uint32_t name_id);

  SummaryView Summary() const;
  /** False if the name has no statistics. */
  bool Event(uint32_t name_id, EventView* out) const;
  /** Every named event with statistics, in name-id order. */
  std::vector<EventView> All() const;
  /** All-time histograms of every named event, in name-id order (one consistent snapshot). */
  std::vector<EventHistograms> Histograms() const;

 private:
  struct EventAccum;
  struct SummaryAccum;
  struct EventStats;

  EventStats* StatsFor(uint32_t name_id);
  static EventWindow ToWindow(const EventAccum& acc);
  static SummaryWindow ToWindow(const SummaryAccum& acc);
  EventView ViewOf(uint32_t name_id, const EventStats& stats, int64_t now_sec) const;

  std::atomic<bool> enabled_{true};
  std::atomic<bool> resetting_{false};
  mutable std::mutex mu_;
  std::unique_ptr<SummaryAccum> summary_all_;
  // One bucket per second, keyed by the absolute second so stale ones are recognised.
  std::unique_ptr<std::array<std::pair<int64_t, SummaryAccum>, kWindowSec>> summary_last_;
  std::vector<std::unique_ptr<EventStats>> events_;  // indexed by name id
};

/** Sorts (name, view) pairs by `order`; ties and order 0 fall back to name ascending. */
void SortEventViews(std::vector<std::pair<std::string, EventView>>& views, ProfileOrder order);

}  // namespace gsf
