// Client frames for native handlers: checkEnvelope's rules, and replies byte for byte as
// encodeFrame writes them (the ava suite compares with encodeFrame itself).
#include <string>

#include "../core/json_msgpack.h"
#include "../core/session_frame.h"
#include "check.h"

namespace session_frame_test {

namespace {

std::string Mp(const std::string& json) {
  std::string out, error;
  gsf::JsonToMsgpack(json, &out, &error);
  return out;
}

std::string BodyJson(const gsf::Envelope& e) {
  std::string out, error;
  if (e.body.empty()) return "(none)";
  gsf::MsgpackToJson(e.body, &out, &error);
  return out;
}

}  // namespace

TEST(frame_json_envelopes_decode) {
  gsf::Envelope e;
  std::string storage, error;
  REQUIRE(gsf::DecodeEnvelope("{\"type\":\"move\",\"body\":{\"x\":1},\"id\":7}", false, &e, &storage, &error));
  CHECK_EQ(std::string(e.type), std::string("move"));
  CHECK_EQ(BodyJson(e), std::string("{\"x\":1}"));
  CHECK(e.has_id);
  CHECK_EQ(e.id, 7.0);
  REQUIRE(gsf::DecodeEnvelope(" { \"body\" : [1] , \"type\" : \"m\\u00e9\" } ", false, &e, &storage, &error));
  CHECK_EQ(std::string(e.type), std::string("m\xc3\xa9"));
  CHECK_EQ(BodyJson(e), std::string("[1]"));
  CHECK(!e.has_id);
  REQUIRE(gsf::DecodeEnvelope("{\"type\":\"t\"}", false, &e, &storage, &error));
  CHECK_EQ(BodyJson(e), std::string("(none)"));
  REQUIRE(gsf::DecodeEnvelope("{\"type\":\"t\",\"id\":1.0}", false, &e, &storage, &error));
  CHECK_EQ(e.id, 1.0);
}

TEST(frame_bad_envelopes_are_refused) {
  gsf::Envelope e;
  std::string storage, error;
  for (const char* bad : {"[1]", "\"x\"", "{\"type\":\"\"}", "{\"type\":1}", "{\"body\":1}", "{\"type\":\"t\",\"id\":1.5}",
                          "{\"type\":\"t\",\"id\":9007199254740992}", "{\"type\":\"t\",\"id\":null}",
                          "{\"type\":\"t\",\"extra\":1}", "{\"type\":\"t\"", "{\"type\":\"t\"} x"}) {
    CHECK(!gsf::DecodeEnvelope(bad, false, &e, &storage, &error));
    CHECK(!error.empty());
  }
  CHECK(!gsf::DecodeEnvelope("{\"type\":\"t\",\"extra\":1}", false, &e, &storage, &error));
  CHECK_EQ(error, std::string("unknown envelope key 'extra' (allowed: type, body, id)"));
}

TEST(frame_msgpack_envelopes_decode) {
  gsf::Envelope e;
  std::string storage, error;
  std::string frame = Mp("{\"type\":\"move\",\"body\":{\"x\":[1,2]},\"id\":42}");
  REQUIRE(gsf::DecodeEnvelope(frame, true, &e, &storage, &error));
  CHECK_EQ(std::string(e.type), std::string("move"));
  CHECK_EQ(BodyJson(e), std::string("{\"x\":[1,2]}"));
  CHECK(e.has_id && e.id == 42);
  // The body is a view into the frame: no copy for msgpack sessions.
  CHECK(e.body.data() > frame.data() && e.body.data() < frame.data() + frame.size());
  // An undefined body is no body; a 64-bit id is a BigInt in JavaScript, not a safe integer.
  REQUIRE(gsf::DecodeEnvelope(std::string("\x82\xa4type\xa1t\xa4" "body\xd4\x00\x00", 16), true, &e, &storage, &error));
  CHECK(e.body.empty());
  CHECK(!gsf::DecodeEnvelope(std::string("\x82\xa4type\xa1t\xa2id\xcf\0\0\0\0\0\0\0\1", 20), true, &e, &storage, &error));
  CHECK(!gsf::DecodeEnvelope(Mp("[1,2]"), true, &e, &storage, &error));
  CHECK(!gsf::DecodeEnvelope(Mp("{\"type\":\"t\"}") + "\xc0", true, &e, &storage, &error));
}

TEST(frame_replies_encode_as_encode_frame) {
  std::string out, error;
  double id = 7;
  REQUIRE(gsf::EncodeFrame(false, "move", Mp("{\"ok\":true}"), &id, &out, &error));
  CHECK_EQ(out, std::string("{\"type\":\"move\",\"body\":{\"ok\":true},\"id\":7}"));
  out.clear();
  REQUIRE(gsf::EncodeFrame(false, "q\"t", "", nullptr, &out, &error));
  CHECK_EQ(out, std::string("{\"type\":\"q\\\"t\"}"));
  out.clear();
  REQUIRE(gsf::EncodeFrame(false, "t", std::string("\xd4\x00\x00", 3), &id, &out, &error));
  CHECK_EQ(out, std::string("{\"type\":\"t\",\"id\":7}"));
  out.clear();
  REQUIRE(gsf::EncodeFrame(true, "t", "", &id, &out, &error));
  CHECK_EQ(out, std::string("\xde\x00\x03\xa4type\xa1t\xa4" "body\xd4\x00\x00\xa2id\x07", 22));
  out.clear();
  REQUIRE(gsf::EncodeFrame(true, "t", std::string("\x01", 1), nullptr, &out, &error));
  CHECK_EQ(out, std::string("\xde\x00\x02\xa4type\xa1t\xa4" "body\x01", 16));
  out.clear();
  CHECK(!gsf::EncodeFrame(true, "t", std::string("\xc1", 1), nullptr, &out, &error));
  CHECK(!gsf::EncodeFrame(false, "t", std::string("\xd4\x05\x00", 3), nullptr, &out, &error));
  CHECK(!gsf::EncodeFrame(false, "", "", nullptr, &out, &error));
  double fraction = 1.5;
  CHECK(!gsf::EncodeFrame(false, "t", "", &fraction, &out, &error));
  CHECK(out.empty());
}

}  // namespace session_frame_test
