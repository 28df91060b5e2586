// gsf_msgpack.h: exact bytes of the writer (checked against msgpackr's choices) and the reader.
#include <cstring>
#include <string>

#include "check.h"
#include "gsf_msgpack.h"

extern "C" int gsf_msgpack_c_selftest(char* error, size_t error_len);

namespace msgpack_test {

namespace {

std::string Hex(const gsf_mp_writer& w) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < w.len; ++i) {
    out.push_back(digits[w.data[i] >> 4]);
    out.push_back(digits[w.data[i] & 15]);
  }
  return out;
}

template <typename F>
std::string Written(F&& write) {
  gsf_mp_writer w;
  gsf_mp_writer_init(&w);
  write(&w);
  std::string hex = Hex(w);
  gsf_mp_writer_free(&w);
  return hex;
}

}  // namespace

TEST(msgpack_c99_selftest_passes) {
  char error[256] = "";
  CHECK_EQ(gsf_msgpack_c_selftest(error, sizeof error), 0);
  CHECK_EQ(std::string(error), std::string());
}

TEST(msgpack_writer_integers_match_msgpackr) {
  // The bytes msgpackr writes for the same JavaScript numbers.
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, 0); }), std::string("00"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, 127); }), std::string("7f"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, 128); }), std::string("cc80"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, 65536); }), std::string("ce00010000"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, 4294967296LL); }), std::string("cb41f0000000000000"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, -1); }), std::string("ff"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, -33); }), std::string("d0df"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, -129); }), std::string("d1ff7f"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, -2147483648LL); }), std::string("d280000000"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, -2147483649LL); }), std::string("cbc1e0000000200000"));
  // Beyond 2^53 a double would lose digits: the 64-bit formats.
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_uint(w, (1ULL << 53) + 1); }), std::string("cf0020000000000001"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_int(w, -(1LL << 53) - 1); }), std::string("d3ffdfffffffffffff"));
}

TEST(msgpack_writer_strings_and_containers) {
  std::string s31(31, 'a'), s32(32, 'a');
  CHECK_EQ(Written([&](gsf_mp_writer* w) { gsf_mp_write_str(w, s31.data(), s31.size()); }).substr(0, 2), std::string("bf"));
  CHECK_EQ(Written([&](gsf_mp_writer* w) { gsf_mp_write_str(w, s32.data(), s32.size()); }).substr(0, 4), std::string("d920"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_array(w, 15); }), std::string("9f"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_array(w, 16); }), std::string("dc0010"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_map(w, 70000); }), std::string("df00011170"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_bin(w, "", 0); }), std::string("c400"));
  CHECK_EQ(Written([](gsf_mp_writer* w) { gsf_mp_write_double(w, 0.5); }), std::string("cb3fe0000000000000"));
}

TEST(msgpack_reader_numbers_across_formats) {
  auto read_int = [](const std::string& bytes, int64_t* v) {
    gsf_mp_reader r;
    gsf_mp_reader_init(&r, bytes.data(), bytes.size());
    return gsf_mp_read_int(&r, v) && gsf_mp_at_end(&r);
  };
  int64_t v = 0;
  CHECK(read_int(std::string("\xd0\x80", 2), &v) && v == -128);
  CHECK(read_int(std::string("\xd1\x80\x00", 3), &v) && v == -32768);
  CHECK(read_int(std::string("\xcb\x41\xf0\x00\x00\x00\x00\x00\x00", 9), &v) && v == 4294967296LL);  // an exact float
  CHECK(read_int(std::string("\xcf\x7f\xff\xff\xff\xff\xff\xff\xff", 9), &v) && v == INT64_MAX);
  CHECK(!read_int(std::string("\xcf\x80\x00\x00\x00\x00\x00\x00\x00", 9), &v));  // above int64
  CHECK(!read_int(std::string("\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00", 9), &v));  // 0.5
  float f = 1.5f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  std::string f32 = "\xca";
  for (int i = 3; i >= 0; --i) f32.push_back(static_cast<char>(bits >> (8 * i)));
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, f32.data(), f32.size());
  double d = 0;
  CHECK(gsf_mp_read_double(&r, &d) && d == 1.5);
}

TEST(msgpack_skip_refuses_hostile_counts) {
  // A map32 claiming four billion entries in a few bytes is malformed at once, not a long loop.
  std::string bytes("\xdf\xff\xff\xff\xff\x01\x02", 7);
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, bytes.data(), bytes.size());
  CHECK(!gsf_mp_skip(&r));
  CHECK(r.error);
  std::string never_used("\xc1", 1);
  gsf_mp_reader_init(&r, never_used.data(), 1);
  CHECK_EQ(gsf_mp_next_type(&r), static_cast<int>(GSF_MP_NONE));
  CHECK(!gsf_mp_skip(&r));
  // Nested containers and extension values are skipped whole.
  std::string nested("\x92\x81\xa1k\x93\x01\xd4\x00\x00\xc7\x02\x05" "ab\xc0", 15);
  gsf_mp_reader_init(&r, nested.data(), nested.size());
  CHECK(gsf_mp_skip(&r) && gsf_mp_at_end(&r));
}

}  // namespace msgpack_test
