#include "js_number.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace gsf {

namespace {

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

}  // namespace

void AppendBigEndian(uint8_t format, uint64_t v, int size, std::string* out) {
  out->push_back(static_cast<char>(format));
  for (int i = size - 1; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void AppendJsNumber(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "Infinity" : "-Infinity");
    return;
  }
  if (v == 0) {
    out->push_back('0');  // -0 too
    return;
  }
  // Below 2^53 an integer's shortest round-trip digits are its exact digits; above it they
  // are not (9007199254740993 prints as 9007199254740992, 2^63 as 9223372036854776000).
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    AppendInt(static_cast<int64_t>(v), out);
    return;
  }
  // The shortest round-trip digits (as ECMAScript's Number::toString picks them), then
  // ECMAScript's layout: plain up to 21 integer digits, 0.000001 .. , exponent otherwise.
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const char* p = buf;
  if (*p == '-') {
    out->push_back('-');
    ++p;
  }
  char digits[24];
  int k = 0;
  for (; p < r.ptr && *p != 'e'; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+'), r.ptr, exponent);
  int n = exponent + 1;  // the decimal point sits after digit n
  if (k <= n && n <= 21) {
    out->append(digits, k);
    out->append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out->append(digits, n);
    out->push_back('.');
    out->append(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-n), '0');
    out->append(digits, k);
  } else {
    out->push_back(digits[0]);
    if (k > 1) {
      out->push_back('.');
      out->append(digits + 1, k - 1);
    }
    out->push_back('e');
    out->push_back(n - 1 >= 0 ? '+' : '-');
    AppendInt(n - 1 >= 0 ? n - 1 : 1 - n, out);
  }
}

void AppendMsgpackNumber(double v, std::string* out) {
  // msgpackr: `v >>> 0 === v` (0 .. 2^32-1, and -0), then `v >> 0 === v` (-2^31 .. -1), else float64.
  if (v >= 0 && v <= 4294967295.0 && v == std::trunc(v)) {
    uint64_t u = static_cast<uint64_t>(v);
    if (u < 0x80) out->push_back(static_cast<char>(u));
    else if (u <= 0xff) AppendBigEndian(0xcc, u, 1, out);
    else if (u <= 0xffff) AppendBigEndian(0xcd, u, 2, out);
    else AppendBigEndian(0xce, u, 4, out);
    return;
  }
  if (v < 0 && v >= -2147483648.0 && v == std::trunc(v)) {
    int64_t i = static_cast<int64_t>(v);
    if (i >= -32) out->push_back(static_cast<char>(static_cast<int8_t>(i)));
    else if (i >= -128) AppendBigEndian(0xd0, static_cast<uint64_t>(i), 1, out);
    else if (i >= -32768) AppendBigEndian(0xd1, static_cast<uint64_t>(i), 2, out);
    else AppendBigEndian(0xd2, static_cast<uint64_t>(i), 4, out);
    return;
  }
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  AppendBigEndian(0xcb, bits, 8, out);
}

size_t ParseJsonNumber(std::string_view text, double* out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* p = begin;
  bool negative = p < end && *p == '-';
  if (negative) ++p;
  const char* int_start = p;
  if (p < end && *p == '0') {
    ++p;
  } else {
    if (p >= end || *p < '1' || *p > '9') return 0;
    while (p < end && *p >= '0' && *p <= '9') ++p;
  }
  const char* int_end = p;
  bool plain = true;
  if (p < end && *p == '.') {
    plain = false;
    ++p;
    const char* frac = p;
    while (p < end && *p >= '0' && *p <= '9') ++p;
    if (p == frac) return 0;
  }
  const char* frac_end = p;
  long exponent = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    plain = false;
    ++p;
    bool exp_negative = false;
    if (p < end && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
    const char* exp = p;
    while (p < end && *p >= '0' && *p <= '9') {
      if (exponent < 100000) exponent = exponent * 10 + (*p - '0');
      ++p;
    }
    if (p == exp) return 0;
    if (exp_negative) exponent = -exponent;
  }
  size_t length = static_cast<size_t>(p - begin);
  if (plain && int_end - int_start <= 15) {
    int64_t v = 0;
    for (const char* q = int_start; q < int_end; ++q) v = v * 10 + (*q - '0');
    *out = negative ? -static_cast<double>(v) : static_cast<double>(v);
    return length;
  }
  double v = 0;
  auto r = std::from_chars(begin, p, v, std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow or underflow: which one follows from where the first significant digit sits.
    long magnitude = 0;
    bool found = false;
    long position = 0;  // of the digit, counted from the decimal point (first integer digit: int length - 1)
    long int_len = static_cast<long>(int_end - int_start);
    for (const char* q = int_start; q < frac_end && !found; ++q) {
      if (*q == '.') continue;
      if (*q != '0') {
        found = true;
        magnitude = int_len - 1 - position;
      }
      ++position;
    }
    magnitude += exponent;
    v = found && magnitude > 0 ? HUGE_VAL : 0.0;
    if (negative) v = -v;
  } else if (r.ec != std::errc()) {
    return 0;
  }
  *out = v;
  return length;
}

bool IsArrayIndexKey(std::string_view key, uint32_t* index) {
  if (key.empty() || key.size() > 10) return false;
  if (key[0] == '0') {
    if (key.size() != 1) return false;
    *index = 0;
    return true;
  }
  uint64_t v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > 4294967294u) return false;
  *index = static_cast<uint32_t>(v);
  return true;
}

void AppendInteger(uint64_t v, bool negative, std::string* out) {
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (negative) *--p = '-';
  out->append(p, static_cast<size_t>(end - p));
}

}  // namespace gsf
