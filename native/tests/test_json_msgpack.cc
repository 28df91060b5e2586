// JSON <-> msgpack: bytes and text as JSON.parse + msgpackr.pack and msgpackr.unpack +
// JSON.stringify give them (expected values taken from Node). The ava suite cross-checks
// the same functions on random documents.
#include <string>

#include "../core/js_number.h"
#include "../core/json_msgpack.h"
#include "check.h"

namespace json_msgpack_test {

namespace {

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string J2M(const std::string& json) {
  std::string out, error;
  if (!gsf::JsonToMsgpack(json, &out, &error)) return "error: " + error;
  return Hex(out);
}

std::string M2J(const std::string& hex) {
  std::string out, error;
  bool undefined = false;
  if (!gsf::MsgpackToJson(Unhex(hex), &out, &error, &undefined)) return "error: " + error;
  return undefined ? "undefined" : out;
}

std::string Js(double v) {
  std::string out;
  gsf::AppendJsNumber(v, &out);
  return out;
}

}  // namespace

TEST(json_numbers_print_as_javascript) {
  CHECK_EQ(Js(0), std::string("0"));
  CHECK_EQ(Js(-0.0), std::string("0"));
  CHECK_EQ(Js(1e21), std::string("1e+21"));
  CHECK_EQ(Js(1e20), std::string("100000000000000000000"));
  CHECK_EQ(Js(123456789012345680000.0), std::string("123456789012345680000"));
  CHECK_EQ(Js(1e-7), std::string("1e-7"));
  CHECK_EQ(Js(0.000001), std::string("0.000001"));
  CHECK_EQ(Js(1.23e-18), std::string("1.23e-18"));
  CHECK_EQ(Js(-1.5e-9), std::string("-1.5e-9"));
  CHECK_EQ(Js(5e-324), std::string("5e-324"));
  CHECK_EQ(Js(1.7976931348623157e308), std::string("1.7976931348623157e+308"));
  CHECK_EQ(Js(0.1 + 0.2), std::string("0.30000000000000004"));
  CHECK_EQ(Js(1.0000000000000002), std::string("1.0000000000000002"));
  CHECK_EQ(Js(-2147483649.0), std::string("-2147483649"));
  CHECK_EQ(Js(9007199254740991.0), std::string("9007199254740991"));
  CHECK_EQ(Js(-7554446030240878592.0), std::string("-7554446030240879000"));
  CHECK_EQ(Js(9223372036854775808.0), std::string("9223372036854776000"));
}

TEST(json_to_msgpack_matches_msgpackr) {
  CHECK_EQ(J2M("{\"b\":1,\"2\":2,\"a\":3,\"b\":4}"), std::string("de0003a13202a16204a16103"));
  CHECK_EQ(J2M("{}"), std::string("de0000"));
  CHECK_EQ(J2M("[]"), std::string("90"));
  CHECK_EQ(J2M(" [1, 2.5, -3, true, false, null] "), std::string("9601cb4004000000000000fdc3c2c0"));
  CHECK_EQ(J2M("[4294967295, 4294967296, -2147483648, -2147483649]"),
           std::string("94ceffffffffcb41f0000000000000d280000000cbc1e0000000200000"));
  CHECK_EQ(J2M("-0"), std::string("00"));
  CHECK_EQ(J2M("1e400"), std::string("cb7ff0000000000000"));
  CHECK_EQ(J2M("-1e-400"), std::string("00"));
  CHECK_EQ(J2M("\"\\u00e9\\ud83d\\ude00\\n\""), std::string("a7c3a9f09f98800a"));
  CHECK_EQ(J2M("\"\\ud800\""), std::string("a3efbfbd"));  // a lone surrogate has no UTF-8: U+FFFD
  CHECK_EQ(J2M("{\"__proto__\":{}}"), std::string("de0001a95f5f70726f746f5f5fde0000"));
  std::string sixteen = "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]";
  CHECK_EQ(J2M(sixteen), std::string("dc0010") + std::string(32, '0'));
}

TEST(json_to_msgpack_refuses_what_json_parse_refuses) {
  for (const char* bad : {"", "[1,]", "{\"a\" 1}", "{'a':1}", "01", "1.", ".5", "+1", "tru", "\"a", "\"\t\"", "[1] x",
                          "\"\\x\"", "\"\\u12\"", "NaN", "{\"a\":1,}", "\xef\xbb\xbf{}"}) {
    CHECK(J2M(bad).rfind("error: ", 0) == 0);
  }
  std::string deep(gsf::kMaxJsonDepth + 1, '[');
  CHECK(J2M(deep + std::string(gsf::kMaxJsonDepth + 1, ']')).rfind("error: nesting too deep", 0) == 0);
  CHECK(J2M("\"\xff\"").rfind("error: invalid UTF-8", 0) == 0);
}

TEST(msgpack_to_json_matches_json_stringify) {
  CHECK_EQ(M2J("82a16201020c"), std::string("{\"2\":12,\"b\":1}"));     // index keys first
  CHECK_EQ(M2J("82a162d40000a16301"), std::string("{\"c\":1}"));        // undefined values left out
  CHECK_EQ(M2J("83a16101a16202a16103"), std::string("{\"a\":3,\"b\":2}"));  // the last value, the first place
  CHECK_EQ(M2J("92d40000c0"), std::string("[null,null]"));
  CHECK_EQ(M2J("d40000"), std::string("undefined"));
  CHECK_EQ(M2J("c403010203"), std::string("{\"type\":\"Buffer\",\"data\":[1,2,3]}"));
  CHECK_EQ(M2J("d6ff00000001"), std::string("\"1970-01-01T00:00:01.000Z\""));
  CHECK_EQ(M2J("c70cff00000001fffffff000000000"), std::string("\"-000208-05-13T16:27:44.000Z\""));
  CHECK_EQ(M2J("ca3dcccccd"), std::string("0.10000000149011612"));
  CHECK_EQ(M2J("cb7ff8000000000000"), std::string("null"));
  CHECK_EQ(M2J("81c001"), std::string("{\"null\":1}"));
  CHECK_EQ(M2J("81c301"), std::string("{\"true\":1}"));
  CHECK_EQ(M2J("81cb3ff800000000000001"), std::string("{\"1.5\":1}"));
  CHECK_EQ(M2J("81a95f5f70726f746f5f5f01"), std::string("{\"__proto__\":1}"));  // as written (msgpackr: "__proto_")
  CHECK_EQ(M2J("a7226c0a1f5c2f7f"), std::string("\"\\\"l\\n\\u001f\\\\/\x7f\""));
  // 64-bit formats are written exactly (JavaScript would get a BigInt).
  CHECK_EQ(M2J("cfffffffffffffffff"), std::string("18446744073709551615"));
  CHECK_EQ(M2J("d3fffffffffffffffe"), std::string("-2"));
}

TEST(msgpack_to_json_refuses_bad_input) {
  CHECK(M2J("a2c328").rfind("error: ", 0) == 0);      // invalid UTF-8
  CHECK(M2J("a3eda080").rfind("error: ", 0) == 0);    // an encoded surrogate
  CHECK(M2J("d40501").rfind("error: ", 0) == 0);      // an unknown extension
  CHECK(M2J("819101c301").rfind("error: ", 0) == 0);  // an array as a key
  CHECK(M2J("92").rfind("error: ", 0) == 0);          // truncated
  CHECK(M2J("0101").rfind("error: ", 0) == 0);        // two values
  CHECK(M2J("c1").rfind("error: ", 0) == 0);
  CHECK(M2J("dfffffffff").rfind("error: ", 0) == 0);  // a count larger than the input
}

TEST(json_round_trips_through_msgpack) {
  for (const char* json : {"{\"a\":[1,{\"b\":null}],\"c\":\"x\"}", "[[[]],{}]", "\"\"", "0.1", "-12.5e-3",
                           "{\"10\":1,\"9\":2,\"x\":3,\"4294967295\":4,\"4294967294\":5}"}) {
    std::string mp, back, error;
    REQUIRE(gsf::JsonToMsgpack(json, &mp, &error));
    REQUIRE(gsf::MsgpackToJson(mp, &back, &error));
    std::string again;
    REQUIRE(gsf::JsonToMsgpack(back, &again, &error));
    CHECK_EQ(Hex(again), Hex(mp));
  }
  std::string mp, back, error;
  REQUIRE(gsf::JsonToMsgpack("{\"10\":1,\"9\":2,\"x\":3,\"4294967295\":4,\"4294967294\":5}", &mp, &error));
  REQUIRE(gsf::MsgpackToJson(mp, &back, &error));
  CHECK_EQ(back, std::string("{\"9\":2,\"10\":1,\"4294967294\":5,\"x\":3,\"4294967295\":4}"));
}

}  // namespace json_msgpack_test
