#include "profiler.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <vector>

#include "clock.h"

namespace gsf {

void RunningStat::Add(double x) {
  ++count;
  double delta = x - mean;
  mean += delta / static_cast<double>(count);
  m2 += delta * (x - mean);
  max = count == 1 ? x : std::max(max, x);
}

void RunningStat::Merge(const RunningStat& other) {
  if (other.count == 0) return;
  if (count == 0) {
    *this = other;
    return;
  }
  double na = static_cast<double>(count);
  double nb = static_cast<double>(other.count);
  double n = na + nb;
  double delta = other.mean - mean;
  mean += delta * nb / n;
  m2 += other.m2 + delta * delta * na * nb / n;
  max = std::max(max, other.max);
  count += other.count;
}

double RunningStat::Stdev() const {
  if (count == 0 || m2 <= 0) return 0;
  return std::sqrt(m2 / static_cast<double>(count));
}

struct Profiler::SummaryAccum {
  RunningStat execution, io_wait, queue;

  void Add(const ProfileSample& s, double exec) {
    execution.Add(exec);
    io_wait.Add(s.io_wait_sec);
    queue.Add(s.queue_sec);
  }
  void Merge(const SummaryAccum& o) {
    execution.Merge(o.execution);
    io_wait.Merge(o.io_wait);
    queue.Merge(o.queue);
  }
};

struct Profiler::EventAccum {
  RunningStat execution, handler, io_wait, queue, rollbacks;
  std::array<double, 6> object_sums{};

  void Add(const ProfileSample& s, double exec) {
    execution.Add(exec);
    handler.Add(s.handler_sec);
    io_wait.Add(s.io_wait_sec);
    queue.Add(s.queue_sec);
    rollbacks.Add(s.rollbacks);
    for (size_t i = 0; i < object_sums.size(); ++i) object_sums[i] += s.objects[i];
  }
  void Merge(const EventAccum& o) {
    execution.Merge(o.execution);
    handler.Merge(o.handler);
    io_wait.Merge(o.io_wait);
    queue.Merge(o.queue);
    rollbacks.Merge(o.rollbacks);
    for (size_t i = 0; i < object_sums.size(); ++i) object_sums[i] += o.object_sums[i];
  }
};

/** Bucket counts of the four times (execution, handler, io_wait, queue). */
struct HistogramCounts {
  std::array<std::array<uint64_t, kHistogramBuckets>, 4> buckets{};
  /**
   * The exact sums of the four times, only ever added to: a Prometheus histogram's `_sum`
   * must not go down, and mean x count from the running mean does by rounding.
   */
  std::array<double, 4> sums{};

  void Merge(const HistogramCounts& o) {
    for (size_t m = 0; m < buckets.size(); ++m) {
      for (size_t b = 0; b < kHistogramBuckets; ++b) buckets[m][b] += o.buckets[m][b];
      sums[m] += o.sums[m];
    }
  }
};

struct Profiler::EventStats {
  EventAccum all_time;
  // All-time only: a scraper takes windows by differences, so last-minute buckets would only
  // cost memory and merge time.
  HistogramCounts histogram;
  uint64_t timeouts = 0;
  std::array<std::pair<int64_t, EventAccum>, kWindowSec> last;

  EventStats() {
    for (auto& b : last) b.first = INT64_MIN;
  }
};

namespace {

int64_t CurrentSecond() { return NowNs() / kNsPerSec; }

size_t BucketIndex(int64_t sec) {
  int64_t m = sec % Profiler::kWindowSec;
  return static_cast<size_t>(m < 0 ? m + Profiler::kWindowSec : m);
}

bool InWindow(int64_t bucket_sec, int64_t now_sec) {
  return bucket_sec <= now_sec && bucket_sec > now_sec - Profiler::kWindowSec;
}

// A bucket still holding an older second is recycled rather than merged into.
template <typename Accum>
Accum& BucketFor(std::array<std::pair<int64_t, Accum>, Profiler::kWindowSec>& buckets, int64_t sec) {
  auto& b = buckets[BucketIndex(sec)];
  if (b.first != sec) {
    b.first = sec;
    b.second = Accum();
  }
  return b.second;
}

StatView ViewOf(const RunningStat& s) { return StatView{s.mean, s.Stdev(), s.max}; }

}  // namespace

Profiler::Profiler()
    : summary_all_(new SummaryAccum()),
      summary_last_(new std::array<std::pair<int64_t, SummaryAccum>, kWindowSec>()) {
  for (auto& b : *summary_last_) b.first = INT64_MIN;
}

Profiler::~Profiler() = default;

void Profiler::Reset() {
  resetting_.store(true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    *summary_all_ = SummaryAccum();
    for (auto& b : *summary_last_) {
      b.first = INT64_MIN;
      b.second = SummaryAccum();
    }
    events_.clear();
  }
  resetting_.store(false);
}

Profiler::EventStats* Profiler::StatsFor(uint32_t name_id) {
  if (name_id >= events_.size()) events_.resize(static_cast<size_t>(name_id) + 1);
  auto& slot = events_[name_id];
  if (!slot) slot.reset(new EventStats());
  return slot.get();
}

namespace {

// The statistics of one group of samples in a single pass: per metric, the sums of (v − shift)
// and of its square, and the max. Shifting by the group's first value keeps the variance
// exact enough when the values are close together; there is no division per sample, and the
// result is merged into the shared statistics once (Chan et al.).
struct GroupPass {
  static constexpr size_t kMetrics = 5;  // execution, handler, io_wait, queue, rollbacks
  std::array<double, kMetrics> shift{}, sum{}, sumsq{}, max{};
  std::array<double, 6> object_sums{};
  HistogramCounts histogram;  // the four times
  size_t count = 0;

  static std::array<double, kMetrics> Values(const ProfileSample& s) {
    // SPEC 2.6: execution time = queue time + I/O wait + handler time.
    return {s.queue_sec + s.handler_sec + s.io_wait_sec, s.handler_sec, s.io_wait_sec, s.queue_sec, s.rollbacks};
  }

  GroupPass(const ProfileSample* samples, const uint16_t* idx, size_t m) : count(m) {
    shift = Values(samples[idx[0]]);
    max = shift;
    for (size_t i = 0; i < m; ++i) {
      const ProfileSample& s = samples[idx[i]];
      std::array<double, kMetrics> v = Values(s);
      for (size_t k = 0; k < kMetrics; ++k) {
        double d = v[k] - shift[k];
        sum[k] += d;
        sumsq[k] += d * d;
        max[k] = std::max(max[k], v[k]);
      }
      for (size_t k = 0; k < 4; ++k) {
        histogram.buckets[k][HistogramBucket(v[k])]++;
        histogram.sums[k] += v[k];
      }
      for (size_t k = 0; k < object_sums.size(); ++k) object_sums[k] += s.objects[k];
    }
  }

  RunningStat Stat(size_t k) const {
    RunningStat r;
    double n = static_cast<double>(count);
    r.count = count;
    r.mean = shift[k] + sum[k] / n;
    r.m2 = std::max(0.0, sumsq[k] - sum[k] * sum[k] / n);
    r.max = max[k];
    return r;
  }
};


}  // namespace

void Profiler::RecordBatch(const ProfileSample* samples, size_t n) {
  if (n == 0 || !Enabled()) return;
  // Larger batches are recorded in chunks (indices are 16-bit).
  constexpr size_t kChunk = 4096;
  if (n > kChunk) {
    for (size_t off = 0; off < n; off += kChunk) RecordBatch(samples + off, std::min(kChunk, n - off));
    return;
  }
  int64_t sec = CurrentSecond();
  std::array<uint16_t, kChunk> idx;
  std::array<bool, kChunk> done{};

  // Group the samples by name (a batch usually holds one or a few names); unnamed samples
  // form a group of their own that counts in the summary only.
  struct Group { uint32_t name_id; size_t begin; size_t count; };
  std::vector<Group> groups;
  size_t filled = 0;
  for (size_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    uint32_t name = samples[i].name_id;
    size_t begin = filled;
    for (size_t j = i; j < n; ++j) {
      if (!done[j] && samples[j].name_id == name) {
        done[j] = true;
        idx[filled++] = static_cast<uint16_t>(j);
      }
    }
    groups.push_back({name, begin, filled - begin});
  }
  SummaryAccum summary;
  std::vector<EventAccum> locals(groups.size());
  std::vector<HistogramCounts> histograms(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    GroupPass pass(samples, idx.data() + groups[g].begin, groups[g].count);
    EventAccum& a = locals[g];
    a.execution = pass.Stat(0);
    a.handler = pass.Stat(1);
    a.io_wait = pass.Stat(2);
    a.queue = pass.Stat(3);
    a.rollbacks = pass.Stat(4);
    a.object_sums = pass.object_sums;
    histograms[g] = pass.histogram;
    summary.execution.Merge(a.execution);
    summary.io_wait.Merge(a.io_wait);
    summary.queue.Merge(a.queue);
  }

  std::lock_guard<std::mutex> lock(mu_);
  summary_all_->Merge(summary);
  BucketFor(*summary_last_, sec).Merge(summary);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].name_id == 0) continue;
    EventStats* stats = StatsFor(groups[g].name_id);
    stats->all_time.Merge(locals[g]);
    stats->histogram.Merge(histograms[g]);
    BucketFor(stats->last, sec).Merge(locals[g]);
  }
}

void Profiler::RecordTimeout(uint32_t name_id) {
  if (name_id == 0 || !Enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  StatsFor(name_id)->timeouts++;
}

SummaryWindow Profiler::ToWindow(const SummaryAccum& acc) {
  SummaryWindow w;
  w.count = acc.execution.count;
  w.execution = gsf::ViewOf(acc.execution);
  w.io_wait = gsf::ViewOf(acc.io_wait);
  w.queue = gsf::ViewOf(acc.queue);
  return w;
}

EventWindow Profiler::ToWindow(const EventAccum& acc) {
  EventWindow w;
  w.count = acc.execution.count;
  w.rollback_mean = acc.rollbacks.mean;
  w.rollback_max = acc.rollbacks.max;
  w.execution = gsf::ViewOf(acc.execution);
  w.handler = gsf::ViewOf(acc.handler);
  w.io_wait = gsf::ViewOf(acc.io_wait);
  w.queue = gsf::ViewOf(acc.queue);
  if (w.count > 0) {
    for (size_t i = 0; i < w.object_means.size(); ++i) {
      w.object_means[i] = acc.object_sums[i] / static_cast<double>(w.count);
    }
  }
  return w;
}

SummaryView Profiler::Summary() const {
  int64_t now_sec = CurrentSecond();
  std::lock_guard<std::mutex> lock(mu_);
  SummaryAccum last;
  for (const auto& b : *summary_last_) {
    if (InWindow(b.first, now_sec)) last.Merge(b.second);
  }
  return SummaryView{ToWindow(*summary_all_), ToWindow(last)};
}

EventView Profiler::ViewOf(uint32_t name_id, const EventStats& stats, int64_t now_sec) const {
  EventAccum last;
  for (const auto& b : stats.last) {
    if (InWindow(b.first, now_sec)) last.Merge(b.second);
  }
  EventView v;
  v.name_id = name_id;
  v.all_time = ToWindow(stats.all_time);
  v.last1min = ToWindow(last);
  v.timeout_count = stats.timeouts;
  return v;
}

bool Profiler::Event(uint32_t name_id, EventView* out) const {
  int64_t now_sec = CurrentSecond();
  std::lock_guard<std::mutex> lock(mu_);
  if (name_id == 0 || name_id >= events_.size() || !events_[name_id]) return false;
  *out = ViewOf(name_id, *events_[name_id], now_sec);
  return true;
}

std::vector<EventView> Profiler::All() const {
  int64_t now_sec = CurrentSecond();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<EventView> out;
  for (uint32_t id = 1; id < events_.size(); ++id) {
    if (events_[id]) out.push_back(ViewOf(id, *events_[id], now_sec));
  }
  return out;
}

std::vector<EventHistograms> Profiler::Histograms() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<EventHistograms> out;
  for (uint32_t id = 1; id < events_.size(); ++id) {
    if (!events_[id]) continue;
    const EventStats& s = *events_[id];
    EventHistograms h;
    h.name_id = id;
    h.count = s.all_time.execution.count;
    HistogramView* views[4] = {&h.execution, &h.handler, &h.io_wait, &h.queue};
    for (size_t m = 0; m < 4; ++m) {
      views[m]->buckets = s.histogram.buckets[m];
      views[m]->sum = s.histogram.sums[m];
    }
    out.push_back(h);
  }
  return out;
}

void SortEventViews(std::vector<std::pair<std::string, EventView>>& views, ProfileOrder order) {
  auto key = [order](const EventView& v) -> double {
    const EventWindow& w = v.all_time;
    double n = static_cast<double>(w.count);
    switch (order) {
      case ProfileOrder::kExecutionSum: return w.execution.mean * n;
      case ProfileOrder::kHandlerSum: return w.handler.mean * n;
      case ProfileOrder::kIoWaitSum: return w.io_wait.mean * n;
      case ProfileOrder::kExecutionMean: return w.execution.mean;
      case ProfileOrder::kHandlerMean: return w.handler.mean;
      case ProfileOrder::kIoWaitMean: return w.io_wait.mean;
      case ProfileOrder::kName: break;
    }
    return 0;
  };
  std::stable_sort(views.begin(), views.end(), [&](const auto& a, const auto& b) {
    if (order != ProfileOrder::kName) {
      double ka = key(a.second), kb = key(b.second);
      if (ka != kb) return ka > kb;
    }
    return a.first < b.first;
  });
}

}  // namespace gsf
