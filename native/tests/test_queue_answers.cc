// Client messages whose events never finish are answered in place (SetAnsweredMessages): put
// back first on their tag, renamed, with a new id and a byte saying why before their payload.
#include <string>
#include <vector>

#include "check.h"
#include "queue_helpers.h"

namespace queue_answers_test {

namespace {

constexpr uint32_t kMessage = 9, kAnswer = 50, kKeep = 51;

// A client message of session `tag` (network kind 2, the message handler).
uint64_t Message(QueueFixture& f, uint64_t tag, const std::string& frame, uint32_t name = 4) {
  return f.Push(tag, frame, name, tag, 2, kMessage);
}

std::string Why(gsf::TagQueue::AnswerWhy why, const std::string& frame) {
  return std::string(1, static_cast<char>(why)) + frame;
}

std::vector<std::string> Payloads(const std::vector<Taken>& v) {
  std::vector<std::string> out;
  for (const Taken& t : v) out.push_back(t.payload);
  return out;
}

std::vector<uint32_t> Names(const std::vector<Taken>& v) {
  std::vector<uint32_t> out;
  for (const Taken& t : v) out.push_back(t.name_id);
  return out;
}

}  // namespace

TEST(a_timed_out_message_and_those_behind_it_are_answered_first_on_their_tag) {
  QueueFixture f;
  f.queue.SetAnsweredMessages(kMessage, kAnswer, kKeep, true);
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = Message(f, 100, "m1"), a2 = Message(f, 100, "m2");
  REQUIRE(f.Take(s, 10).size() == 2);
  uint64_t timer = f.Push(100, "t", 7);           // not a message: cancelled as before
  uint64_t refused = f.Push(100, "err", kKeep, 100, 2, kMessage);  // an error frame: kept as it is
  uint64_t a3 = Message(f, 100, "m3");
  REQUIRE(f.Start(s, 0));  // a1 runs and hangs
  std::vector<gsf::DroppedEvent> dropped;
  gsf::DroppedEvent timed_out{};
  REQUIRE(f.queue.TimeoutSlot(s, a1, &dropped, nullptr, nullptr, &timed_out));
  CHECK_EQ(timed_out.id, a1);
  // Reported under their old ids, in queue order, as before.
  CHECK_EQ(DroppedIds(dropped), (std::vector<uint64_t>{a2, timer, refused, a3}));
  uint64_t later = Message(f, 100, "m4");  // pushed after the timeout: behind the answers
  auto got = f.Take(other, 10);
  CHECK_EQ(Payloads(got), (std::vector<std::string>{
    Why(gsf::TagQueue::kAnswerTimedOut, "m1"), Why(gsf::TagQueue::kAnswerCancelled, "m2"), "err",
    Why(gsf::TagQueue::kAnswerCancelled, "m3"), "m4"}));
  CHECK_EQ(Names(got), (std::vector<uint32_t>{kAnswer, kAnswer, kKeep, kAnswer, 4}));
  for (size_t i = 0; i < 4; ++i) {
    CHECK(got[i].id > a3);  // new ids
    CHECK_EQ(got[i].session_id, 100u);
    CHECK_EQ(got[i].handler_id, kMessage);
  }
  CHECK_EQ(got[4].id, later);
  REQUIRE(f.CompleteAll(other, 5));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.cancelled_total, 1u);  // the timer event only
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(f.queue.SlotReleaseThread(1), 0);
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

TEST(without_answers_on_timeout_a_timed_out_tag_is_dropped_as_before) {
  QueueFixture f;
  f.queue.SetAnsweredMessages(kMessage, kAnswer, kKeep, false);
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = Message(f, 100, "m1"), a2 = Message(f, 100, "m2");
  REQUIRE(f.Take(s, 10).size() == 2);
  REQUIRE(f.Start(s, 0));
  std::vector<gsf::DroppedEvent> dropped;
  REQUIRE(f.queue.TimeoutSlot(s, a1, &dropped));
  CHECK_EQ(DroppedIds(dropped), (std::vector<uint64_t>{a2}));
  CHECK_EQ(f.Take(other, 10).size(), 0u);
  CHECK_EQ(f.queue.Stats().cancelled_total, 2u);
}

TEST(a_message_lost_with_its_thread_is_answered_before_the_claimed_events_behind_it) {
  QueueFixture f;
  f.queue.SetAnsweredMessages(kMessage, kAnswer, kKeep, false);  // lost ones are answered all the same
  int s = f.queue.SlotRegister(21), other = f.queue.SlotRegister(22);
  uint64_t a1 = Message(f, 100, "m1"), a2 = Message(f, 100, "m2");
  REQUIRE(f.Take(s, 10).size() == 2);
  REQUIRE(f.Start(s, 0));
  gsf::DroppedEvent lost{};
  CHECK_EQ(f.queue.SlotReleaseThread(21, nullptr, &lost), 2);
  CHECK_EQ(lost.id, a1);
  auto got = f.Take(other, 10);
  CHECK_EQ(Payloads(got), (std::vector<std::string>{Why(gsf::TagQueue::kAnswerLost, "m1"), "m2"}));
  CHECK_EQ(got[1].id, a2);
  REQUIRE(f.CompleteAll(other, 2));
  CHECK_EQ(f.queue.Stats().cancelled_total, 0u);
}

TEST(an_abandoned_message_is_answered_first_on_its_tag) {
  QueueFixture f;
  f.queue.SetAnsweredMessages(kMessage, kAnswer, kKeep, true);
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = Message(f, 100, "m1"), b1 = f.Push(200, "", 8);
  REQUIRE(f.Take(s, 10).size() == 2);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));  // a1 awaits
  uint64_t a2 = Message(f, 100, "m2");
  REQUIRE(f.Start(s, 1));  // b1 hangs
  std::vector<gsf::DroppedEvent> dropped;
  std::vector<gsf::AbandonedEvent> abandoned;
  REQUIRE(f.queue.TimeoutSlot(s, b1, &dropped, &abandoned));
  REQUIRE(abandoned.size() == 1);
  CHECK_EQ(abandoned[0].id, a1);
  auto got = f.Take(other, 10);
  CHECK_EQ(Payloads(got), (std::vector<std::string>{Why(gsf::TagQueue::kAnswerAbandoned, "m1"), "m2"}));
  CHECK_EQ(got[1].id, a2);
  REQUIRE(f.CompleteAll(other, 2));
  CHECK_EQ(f.queue.Stats().outstanding, 0u);
}

TEST(a_parked_message_that_times_out_is_answered_before_its_skipped_and_queued_successors) {
  QueueFixture f;
  f.queue.SetAnsweredMessages(kMessage, kAnswer, kKeep, true);
  int s = f.queue.SlotRegister(1), other = f.queue.SlotRegister(2);
  uint64_t a1 = Message(f, 100, "m1");
  Message(f, 100, "m2");
  REQUIRE(f.Take(s, 10).size() == 2);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));  // a1 awaits; a2 is skipped in the open claim
  Message(f, 100, "m3");
  std::vector<gsf::DroppedEvent> dropped;
  REQUIRE(f.queue.TimeoutParked(a1, &dropped, nullptr));
  CHECK_EQ(dropped.size(), 2u);
  REQUIRE(f.CompleteAll(s, 2));  // the claim ends: its tag is free
  auto got = f.Take(other, 10);
  CHECK_EQ(Payloads(got), (std::vector<std::string>{Why(gsf::TagQueue::kAnswerTimedOut, "m1"),
                                                    Why(gsf::TagQueue::kAnswerCancelled, "m2"),
                                                    Why(gsf::TagQueue::kAnswerCancelled, "m3")}));
  REQUIRE(f.CompleteAll(other, 3));
  gsf::QueueStats st = f.queue.Stats();
  CHECK_EQ(st.outstanding, 0u);
  CHECK_EQ(st.waiting, 0u);
  CHECK_EQ(st.cancelled_total, 0u);

  // Parked after its claim ended: the tag is made ready at once.
  uint64_t b1 = Message(f, 300, "n1");
  REQUIRE(f.Take(s, 10).size() == 1);
  REQUIRE(f.Start(s, 0));
  REQUIRE(f.queue.Park(s, 0, 0));
  REQUIRE(f.CompleteAll(s, 1));
  Message(f, 300, "n2");
  REQUIRE(f.queue.TimeoutParked(b1, &dropped, nullptr));
  got = f.Take(other, 10);
  CHECK_EQ(Payloads(got), (std::vector<std::string>{Why(gsf::TagQueue::kAnswerTimedOut, "n1"),
                                                    Why(gsf::TagQueue::kAnswerCancelled, "n2")}));
  REQUIRE(f.CompleteAll(other, 2));
  CHECK_EQ(f.queue.TagStateCount(), 0u);
}

}  // namespace queue_answers_test
