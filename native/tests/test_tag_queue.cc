// Single-threaded behaviour of the tag queue: ordering, claims, payloads, cancellation.
#include <map>
#include <string>
#include <vector>

#include "../core/errors.h"
#include "check.h"
#include "fake_clock.h"
#include "queue_helpers.h"

namespace tag_queue_test {

using gsf::kFlagNotRun;

TEST(queue_push_assigns_increasing_ids) {
  QueueFixture f;
  uint64_t a = f.Push(10), b = f.Push(11), c = f.Push(10);
  CHECK_EQ(a, 1u);
  CHECK_EQ(b, 2u);
  CHECK_EQ(c, 3u);
  CHECK_EQ(f.queue.Waiting(), 3u);
}

TEST(queue_take_fills_meta_and_payloads) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t tag = (1ull << 40) + 7;  // tags reach 2^53 and must survive the double round trip
  uint64_t id1 = f.Push(tag, "hello", 5, 99, 1, 42);
  uint64_t id2 = f.Push(tag + 1, "", 6, 0, 3, 43);
  uint64_t id3 = f.Push(tag + 2, std::string("a\0b", 3), 7, 12345678901ull, 4, 44);
  auto got = f.Take(s, 10);
  REQUIRE(got.size() == 3);
  CHECK_EQ(got[0].id, id1);
  CHECK_EQ(got[0].tag, tag);
  CHECK_EQ(got[0].name_id, 5u);
  CHECK_EQ(got[0].handler_id, 42u);
  CHECK_EQ(got[0].session_id, 99u);
  CHECK_EQ(got[0].kind, 1);
  CHECK_EQ(got[0].payload, std::string("hello"));
  CHECK_EQ(got[1].id, id2);
  CHECK_EQ(got[1].payload, std::string());
  CHECK_EQ(got[1].kind, 3);
  CHECK_EQ(got[2].id, id3);
  CHECK_EQ(got[2].session_id, 12345678901ull);
  CHECK_EQ(got[2].payload, std::string("a\0b", 3));
  CHECK_EQ(f.queue.Waiting(), 0u);
  CHECK_EQ(f.queue.Stats().outstanding, 3u);
}

TEST(queue_payload_offsets_are_packed) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  f.Push(1000, "abc");
  f.Push(1001, "defgh");
  std::vector<double> meta(2 * gsf::kTakeStride);
  std::vector<uint8_t> bytes(8);
  CHECK_EQ(f.queue.Take(s, meta.data(), 2, bytes.data(), bytes.size()), 2);
  CHECK_EQ(meta[6], 0.0);
  CHECK_EQ(meta[7], 3.0);
  CHECK_EQ(meta[gsf::kTakeStride + 6], 3.0);
  CHECK_EQ(meta[gsf::kTakeStride + 7], 5.0);
  CHECK_EQ(std::string(bytes.begin(), bytes.end()), std::string("abcdefgh"));
}

TEST(queue_tag_events_are_taken_consecutively_in_ready_order) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t a1 = f.Push(100), b1 = f.Push(200), a2 = f.Push(100), c1 = f.Push(300), a3 = f.Push(100);
  auto got = f.Take(s, 10);
  CHECK_EQ(Ids(got), (std::vector<uint64_t>{a1, a2, a3, b1, c1}));
}

TEST(queue_claimed_tag_is_exclusive_until_complete) {
  QueueFixture f;
  int s1 = f.queue.SlotRegister(1), s2 = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100);
  CHECK_EQ(Ids(f.Take(s1, 10)), (std::vector<uint64_t>{a1}));
  uint64_t a2 = f.Push(100);
  uint64_t b1 = f.Push(200);
  // a2 waits behind the running a1; only b1 can go to the other slot.
  CHECK_EQ(Ids(f.Take(s2, 10)), (std::vector<uint64_t>{b1}));
  CHECK(f.CompleteAll(s2, 1));
  CHECK_EQ(f.Take(s2, 10).size(), 0u);
  CHECK_EQ(f.queue.Waiting(), 1u);
  CHECK(f.CompleteAll(s1, 1));
  CHECK_EQ(Ids(f.Take(s2, 10)), (std::vector<uint64_t>{a2}));
}

TEST(queue_take_respects_max_and_keeps_partial_tag_claimed) {
  QueueFixture f;
  int s1 = f.queue.SlotRegister(1), s2 = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100), a2 = f.Push(100), a3 = f.Push(100), b1 = f.Push(200);
  CHECK_EQ(Ids(f.Take(s1, 2)), (std::vector<uint64_t>{a1, a2}));
  CHECK_EQ(Ids(f.Take(s2, 10)), (std::vector<uint64_t>{b1}));  // a3 stays with its claimed tag
  CHECK(f.CompleteAll(s2, 1));
  CHECK(f.CompleteAll(s1, 2));
  CHECK_EQ(Ids(f.Take(s2, 10)), (std::vector<uint64_t>{a3}));
}

TEST(queue_completed_tag_goes_to_back_of_ready_list) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t a1 = f.Push(100);
  f.Take(s, 1);
  uint64_t a2 = f.Push(100), b1 = f.Push(200);
  CHECK(f.CompleteAll(s, 1));
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{b1, a2}));
  (void)a1;
}

TEST(queue_payload_too_big_returns_negative_size) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  f.Push(100, std::string(100, 'x'));
  int64_t r = 0;
  CHECK_EQ(f.Take(s, 10, 10, &r).size(), 0u);
  CHECK_EQ(r, -100);
  CHECK_EQ(f.queue.Waiting(), 1u);
  CHECK_EQ(f.queue.Stats().outstanding, 0u);
  auto got = f.Take(s, 10, 100, &r);  // no claim was opened, so taking again is fine
  CHECK_EQ(r, 1);
  CHECK_EQ(got[0].payload, std::string(100, 'x'));
}

TEST(queue_one_byte_payload_never_reports_minus_one) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  f.Push(100, "x");
  int64_t r = 0;
  f.Take(s, 10, 0, &r);
  CHECK_EQ(r, -2);
}

TEST(queue_take_stops_at_first_payload_that_does_not_fit) {
  QueueFixture f;
  int s1 = f.queue.SlotRegister(1), s2 = f.queue.SlotRegister(2);
  uint64_t a1 = f.Push(100, "12345"), a2 = f.Push(100, "1234567890"), b1 = f.Push(200, "1");
  int64_t r = 0;
  CHECK_EQ(Ids(f.Take(s1, 10, 8, &r)), (std::vector<uint64_t>{a1}));
  // b1 would fit, but taking stops at the first event that does not.
  CHECK_EQ(Ids(f.Take(s2, 10, 64)), (std::vector<uint64_t>{b1}));
  CHECK(f.CompleteAll(s1, 1));
  CHECK_EQ(Ids(f.Take(s1, 10, 64)), (std::vector<uint64_t>{a2}));
}

TEST(queue_take_with_open_claim_throws) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  f.Push(100);
  f.Push(200);
  f.Take(s, 1);
  CHECK_THROWS(f.Take(s, 1), gsf::StateError);
  CHECK(f.CompleteAll(s, 1));
  CHECK_EQ(f.Take(s, 1).size(), 1u);
}

TEST(queue_bad_slot_and_index_throw) {
  QueueFixture f;
  double meta[8];
  uint8_t bytes[8];
  CHECK_THROWS(f.queue.Take(-1, meta, 1, bytes, 8), gsf::ArgumentError);
  CHECK_THROWS(f.queue.Take(gsf::TagQueue::kMaxSlots, meta, 1, bytes, 8), gsf::ArgumentError);
  CHECK_THROWS(f.queue.Take(3, meta, 1, bytes, 8), gsf::StateError);  // not registered
  int s = f.queue.SlotRegister(1);
  f.Push(100);
  f.Take(s, 1);
  double timings[24] = {};
  CHECK_THROWS(f.queue.Complete(s, 2, timings), gsf::ArgumentError);
  CHECK(f.queue.Complete(s, 1, timings));
  CHECK(f.queue.Complete(s, 0, timings));  // nothing claimed, nothing to do
  CHECK_THROWS(f.queue.Complete(s, 1, timings), gsf::StateError);
}

TEST(queue_empty_tag_states_are_erased) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  for (uint64_t t = 0; t < 1000; ++t) f.Push((1ull << 32) + t);
  CHECK_EQ(f.queue.TagStateCount(), 1000u);
  for (int round = 0; round < 20; ++round) {
    auto got = f.Take(s, 64);
    f.CompleteAll(s, got.size());
  }
  CHECK_EQ(f.queue.Waiting(), 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(queue_ready_counts_takeable_tags) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  CHECK_EQ(f.queue.ReadyTags(), 0u);
  f.Push(100);
  f.Push(100);
  f.Push(200);
  CHECK_EQ(f.queue.ReadyTags(), 2u);
  f.Take(s, 1);  // claims tag 100 with one event still queued behind it
  CHECK_EQ(f.queue.ReadyTags(), 1u);
  f.Take(other, 10);  // claims tag 200
  CHECK_EQ(f.queue.ReadyTags(), 0u);
  f.CompleteAll(s, 1);
  CHECK_EQ(f.queue.ReadyTags(), 1u);
}

TEST(queue_push_batch_over_every_run_queue_keeps_each_tags_order_and_ids) {
  // A batch that interleaves 200 tags (spread over every run queue) 5 times: the batch is
  // grouped by run queue inside, yet each tag's events come out in push order and each event
  // keeps the id of its place in the batch.
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  constexpr size_t kTags = 200, kRounds = 5, kN = kTags * kRounds;
  std::vector<gsf::EventInput> in(kN);
  std::vector<std::string> payloads(kN);
  for (size_t i = 0; i < kN; ++i) {
    payloads[i] = std::to_string(i);
    in[i].tag = 1000 + i % kTags;
    in[i].name_id = static_cast<uint32_t>(i);
    in[i].payload = reinterpret_cast<const uint8_t*>(payloads[i].data());
    in[i].payload_len = payloads[i].size();
  }
  const uint64_t first = f.queue.PushBatch(in.data(), kN);
  CHECK_EQ(f.queue.Waiting(), kN);
  std::map<uint64_t, std::vector<size_t>> per_tag;
  size_t seen = 0;
  while (seen < kN) {
    auto got = f.Take(s, 64);
    REQUIRE(!got.empty());
    for (const auto& e : got) {
      const size_t i = e.name_id;
      CHECK_EQ(e.id, first + i);
      CHECK_EQ(e.tag, in[i].tag);
      CHECK_EQ(e.payload, payloads[i]);
      per_tag[e.tag].push_back(i);
    }
    seen += got.size();
    REQUIRE(f.CompleteAll(s, got.size()));
  }
  CHECK_EQ(per_tag.size(), kTags);
  for (const auto& [tag, order] : per_tag) {
    REQUIRE(order.size() == kRounds);
    for (size_t r = 0; r < kRounds; ++r) CHECK_EQ(order[r], (tag - 1000) + r * kTags);
  }
}

TEST(queue_drop_all_queued_keeps_claims) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t a1 = f.Push(100);
  f.Take(s, 10);
  f.Push(100);
  f.Push(200);
  f.Push(300);
  CHECK_EQ(f.queue.DropAllQueued(), 3u);
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.outstanding, 1u);
  CHECK_EQ(st.cancelled_total, 3u);
  CHECK_EQ(f.queue.ReadyTags(), 0u);
  CHECK(f.CompleteAll(s, 1));
  CHECK_EQ(f.queue.TagStateCount(), 0u);
  uint64_t b = f.Push(100);
  CHECK_EQ(Ids(f.Take(s, 10)), (std::vector<uint64_t>{b}));
  (void)a1;
}

TEST(queue_push_batch_keeps_order_ids_and_payloads) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  uint64_t before = f.Push(7, "first");
  std::string a = "alpha", c = "gamma!";
  gsf::EventInput in[3];
  in[0].tag = 7;
  in[0].name_id = 11;
  in[0].handler_id = 21;
  in[0].session_id = 7;
  in[0].kind = 1;
  in[0].payload = reinterpret_cast<const uint8_t*>(a.data());
  in[0].payload_len = a.size();
  in[1].tag = 8;  // no payload
  in[1].name_id = 12;
  in[2].tag = 7;
  in[2].name_id = 13;
  in[2].payload = reinterpret_cast<const uint8_t*>(c.data());
  in[2].payload_len = c.size();
  uint64_t first = f.queue.PushBatch(in, 3);
  CHECK_EQ(first, before + 1);
  CHECK_EQ(f.queue.PushBatch(in, 0), 0u);
  CHECK_EQ(f.queue.Waiting(), 4u);
  CHECK_EQ(f.queue.Stats().pushed_total, 4u);
  auto got = f.Take(s, 10);
  REQUIRE(got.size() == 4);
  // Tag 7 was ready first: its three events come consecutively, in push order, then tag 8.
  CHECK_EQ(got[0].payload, std::string("first"));
  CHECK_EQ(got[1].id, first);
  CHECK_EQ(got[1].payload, a);
  CHECK_EQ(got[1].name_id, 11u);
  CHECK_EQ(got[1].handler_id, 21u);
  CHECK_EQ(got[1].session_id, 7u);
  CHECK_EQ(got[1].kind, 1);
  CHECK_EQ(got[2].id, first + 2);
  CHECK_EQ(got[2].payload, c);
  CHECK_EQ(got[3].id, first + 1);
  CHECK_EQ(got[3].tag, 8u);
  CHECK_EQ(got[3].payload, std::string());
}

TEST(batch_waits_in_inbox_counted_and_filed_before_later_pushes) {
  QueueFixture f;
  int s = f.queue.SlotRegister(1);
  const std::string a = "a1", b = "a2", c = "other";
  gsf::EventInput in[3];
  in[0].tag = 70;
  in[0].payload = reinterpret_cast<const uint8_t*>(a.data());
  in[0].payload_len = a.size();
  in[1].tag = 70;
  in[1].payload = reinterpret_cast<const uint8_t*>(b.data());
  in[1].payload_len = b.size();
  in[2].tag = 71;
  in[2].payload = reinterpret_cast<const uint8_t*>(c.data());
  in[2].payload_len = c.size();
  const uint64_t first = f.queue.PushBatch(in, 3);
  // Not filed yet, but counted: waiting, pushed, and (at most one per event) ready.
  CHECK(f.queue.HasReady());
  CHECK(f.queue.ReadyTags() >= 2u);
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.waiting, 3u);
  CHECK_EQ(st.pushed_total, 3u);
  CHECK_EQ(f.queue.ReadyTags(), 2u);  // Stats filed them: two tags ready
  // A single push after the batch comes after it in its tag.
  const uint64_t later = f.Push(70, "a3");
  const uint64_t first2 = f.queue.PushBatch(in, 1);  // another a1, after a3
  auto got = f.Take(s, 10);
  std::vector<std::pair<uint64_t, std::string>> tag70;
  for (const auto& e : got) {
    if (e.tag == 70) tag70.emplace_back(e.id, e.payload);
  }
  CHECK(tag70 == (std::vector<std::pair<uint64_t, std::string>>{{first, "a1"}, {first + 1, "a2"}, {later, "a3"}, {first2, "a1"}}));
  CHECK_EQ(got.size(), 5u);
  REQUIRE(f.CompleteAll(s, got.size()));
  // Dropping everything queued drops what waits in an inbox too.
  f.queue.PushBatch(in, 3);
  CHECK_EQ(f.queue.DropAllQueued(), 3u);
  CHECK_EQ(f.queue.Stats().waiting, 0u);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

}  // namespace tag_queue_test
