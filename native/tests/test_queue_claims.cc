// Claims over several run queues, and the park hints that end a tag's run in a claim.
#include <map>
#include <set>
#include <vector>

#include "check.h"
#include "queue_helpers.h"

namespace queue_claims_test {

namespace {

constexpr size_t kTags = 64;  // spread over every run queue by the tag hash

/** Pushes `per_tag` events on each of tags 1..kTags, tag by tag; returns their ids by tag. */
std::map<uint64_t, std::vector<uint64_t>> PushSpread(QueueFixture& f, size_t per_tag) {
  std::map<uint64_t, std::vector<uint64_t>> ids;
  for (size_t r = 0; r < per_tag; ++r) {
    for (uint64_t tag = 1; tag <= kTags; ++tag) ids[tag].push_back(f.Push(tag, "p" + std::to_string(tag)));
  }
  return ids;
}

/** Checks that `got` holds each tag's events in push order (a prefix of `ids[tag]` from `from[tag]`). */
void CheckTagOrder(const std::vector<Taken>& got, std::map<uint64_t, std::vector<uint64_t>>& ids,
                   std::map<uint64_t, size_t>& from) {
  for (const Taken& t : got) {
    size_t& k = from[t.tag];
    REQUIRE(k < ids[t.tag].size());
    CHECK_EQ(t.id, ids[t.tag][k]);
    CHECK_EQ(t.payload, "p" + std::to_string(t.tag));
    ++k;
  }
}

/**
 * Claims on `slot`, `max` at a time, completing each, until `count` events came: each tag's in
 * order from `from` on, none of `never`. Returns how many claims it took.
 */
size_t DrainInOrder(QueueFixture& f, int slot, size_t max, size_t count, std::map<uint64_t, std::vector<uint64_t>>& ids,
                    std::map<uint64_t, size_t>& from, uint64_t never = 0) {
  size_t seen = 0, claims = 0;
  while (seen < count) {
    auto part = f.Take(slot, max);
    REQUIRE(!part.empty());
    CHECK(part.size() <= max);
    for (const Taken& t : part) CHECK(t.tag != never);
    CheckTagOrder(part, ids, from);
    seen += part.size();
    ++claims;
    REQUIRE(f.CompleteAll(slot, part.size()));
  }
  CHECK_EQ(seen, count);
  return claims;
}

}  // namespace

TEST(claim_takes_ready_runs_from_every_run_queue_while_it_has_room) {
  QueueFixture f(gsf::TagQueue::kRunQueues);
  int s = f.queue.SlotRegister(1);
  auto ids = PushSpread(f, 1);
  // One thread, one claim: every ready tag, whichever run queue it is in.
  auto got = f.Take(s, 1000);
  CHECK_EQ(got.size(), kTags);
  std::set<uint64_t> tags;
  for (const Taken& t : got) tags.insert(t.tag);
  CHECK_EQ(tags.size(), kTags);
  REQUIRE(f.CompleteAll(s, got.size()));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);

  // With less room, claims stop at `max` and the next ones go on from there: every event
  // exactly once, each tag in push order.
  ids = PushSpread(f, 3);
  std::map<uint64_t, size_t> from;
  const size_t claims = DrainInOrder(f, s, 10, kTags * 3, ids, from);
  for (const auto& [tag, k] : from) CHECK_EQ(k, 3u);
  CHECK_EQ(f.queue.Waiting(), 0u);
  CHECK(claims >= kTags * 3 / 10);
}

TEST(claim_over_several_run_queues_parks_requeues_and_completes) {
  QueueFixture f(gsf::TagQueue::kRunQueues);
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  auto ids = PushSpread(f, 2);
  auto got = f.Take(s, 1000);
  REQUIRE(got.size() == kTags * 2);
  // The first event parks; its tag's second event, later in the claim, is skipped.
  const uint64_t parked_tag = got[0].tag;
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  size_t last = 0;
  for (size_t i = 1; i < got.size(); ++i) {
    if (got[i].tag != parked_tag) last = i;
  }
  REQUIRE(f.Start(s, static_cast<int32_t>(last)));
  std::vector<double> timings(got.size() * gsf::kCompleteStride, 0.0);
  CHECK_EQ(f.queue.Complete(s, got.size(), timings.data()), gsf::kCompleteDone);  // nothing new is ready
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.completed_total, kTags * 2 - 2);
  CHECK_EQ(st.outstanding, 1u);  // the parked one
  CHECK_EQ(st.waiting, 1u);      // its tag's second event, back in its run queue
  CHECK_EQ(f.Take(other, 10).size(), 0u);  // held by the parked event

  std::vector<double> one(gsf::kCompleteStride, 0.0);
  CHECK_EQ(f.queue.FinishParked(ids[parked_tag][0], one.data()), gsf::kCompleteMadeReady);
  auto rest = f.Take(other, 10);
  REQUIRE(rest.size() == 1);
  CHECK_EQ(rest[0].id, ids[parked_tag][1]);
  REQUIRE(f.CompleteAll(other, 1));
  CHECK_EQ(f.queue.Stats().outstanding, 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(timeout_of_a_claim_over_several_run_queues_requeues_every_other_tag) {
  QueueFixture f(gsf::TagQueue::kRunQueues);
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  auto ids = PushSpread(f, 2);
  auto got = f.Take(s, 1000);
  REQUIRE(got.size() == kTags * 2);
  // Events 0..4 ran; event 5 hangs and times out.
  for (int32_t i = 0; i <= 5; ++i) REQUIRE(f.Start(s, i));
  const uint64_t hung_tag = got[5].tag;
  std::vector<gsf::DroppedEvent> dropped;
  REQUIRE(f.queue.TimeoutSlot(s, got[5].id, &dropped));
  // The hung event's tag loses its other events; the unstarted events of every other tag go
  // back to their own run queues, in order.
  for (const auto& d : dropped) CHECK_EQ(d.tag, hung_tag);
  std::set<uint64_t> ran;
  for (int i = 0; i < 5; ++i) ran.insert(got[static_cast<size_t>(i)].id);
  size_t expect_back = 0;
  for (size_t i = 6; i < got.size(); ++i) {
    if (got[i].tag != hung_tag) ++expect_back;
  }
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.waiting, expect_back);
  CHECK_EQ(st.outstanding, 0u);

  std::map<uint64_t, size_t> from;
  for (const Taken& t : got) {
    if (ran.count(t.id)) ++from[t.tag];
  }
  from[hung_tag] = ids[hung_tag].size();
  DrainInOrder(f, other, 1000, expect_back, ids, from, hung_tag);
  for (const auto& [tag, k] : from) CHECK_EQ(k, ids[tag].size());
  CHECK_EQ(f.queue.Waiting(), 0u);
  CHECK_EQ(f.queue.SlotReleaseThread(1), 0);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(release_thread_requeues_a_claim_over_several_run_queues) {
  QueueFixture f(gsf::TagQueue::kRunQueues);
  int s = f.queue.SlotRegister(7), other = f.queue.SlotRegister(8);
  auto ids = PushSpread(f, 2);
  auto got = f.Take(s, 1000);
  REQUIRE(got.size() == kTags * 2);
  REQUIRE(f.Start(s, 0));  // ran to its end
  REQUIRE(f.Start(s, 1));  // running when its thread died: never finishes
  CHECK_EQ(f.queue.SlotReleaseThread(7), static_cast<int64_t>(kTags * 2 - 2));
  std::map<uint64_t, size_t> from;
  ++from[got[0].tag];
  ++from[got[1].tag];
  DrainInOrder(f, other, 1000, kTags * 2 - 2, ids, from);
  CHECK_EQ(f.queue.Waiting(), 0u);
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.cancelled_total, 1u);
}

TEST(park_hint_ends_a_tags_run_in_a_claim) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  constexpr uint32_t kParks = 7, kSync = 8;
  uint64_t a1 = f.Push(100, "", 0, 0, 0, kParks), a2 = f.Push(100, "", 0, 0, 0, kSync), a3 = f.Push(100, "", 0, 0, 0, kParks);
  uint64_t b1 = f.Push(200, "", 0, 0, 0, kSync), b2 = f.Push(200, "", 0, 0, 0, kSync);
  // No hints: whole runs.
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{a1, a2, a3, b1, b2}));
  REQUIRE(f.CompleteAll(s, 5));
  // With handler 7 marked, a tag's run ends after its event: the claim goes on to other tags.
  f.queue.Hints().Cells()[kParks].store(1);
  CHECK(f.queue.Hints().Parks(kParks));
  CHECK(!f.queue.Hints().Parks(kSync));
  CHECK(!f.queue.Hints().Parks(static_cast<uint32_t>(gsf::ParkHints::kHandlers)));
  a1 = f.Push(100, "", 0, 0, 0, kParks);
  a2 = f.Push(100, "", 0, 0, 0, kSync);
  a3 = f.Push(100, "", 0, 0, 0, kParks);
  uint64_t a4 = f.Push(100, "", 0, 0, 0, kSync);
  b1 = f.Push(200, "", 0, 0, 0, kSync);
  b2 = f.Push(200, "", 0, 0, 0, kParks);
  uint64_t b3 = f.Push(200, "", 0, 0, 0, kSync);
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{a1, b1, b2}));
  REQUIRE(f.CompleteAll(s, 3));
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{a2, a3, b3}));
  REQUIRE(f.CompleteAll(s, 3));
  f.queue.Hints().Clear();
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{a4}));
  REQUIRE(f.CompleteAll(s, 1));
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

}  // namespace queue_claims_test
