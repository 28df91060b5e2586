// Text as the TypeScript game cuts and formats it: trim, slice by UTF-16 code units, UTC days,
// and the integer maps (inventory, clicks_by_day) kept in their key order.
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <random>

#include "arena.h"

namespace arena {
namespace {

/** The code point at s[i] and its length in bytes (invalid UTF-8: one byte, U+FFFD). */
std::pair<uint32_t, size_t> CodePoint(std::string_view s, size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return {0xfffd, 1};
  uint32_t cp = n == 1 ? b : b & (0xff >> (n + 1));
  for (size_t k = 1; k < n; k++) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  return {cp, n};
}

/** ECMAScript's WhiteSpace and LineTerminator code points (what trim removes). */
bool JsSpace(uint32_t cp) {
  return cp == 0x09 || cp == 0x0a || cp == 0x0b || cp == 0x0c || cp == 0x0d || cp == 0x20 || cp == 0xa0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000 ||
         cp == 0xfeff;
}

}  // namespace

std::string_view Trim(std::string_view s) {
  size_t start = 0;
  while (start < s.size()) {
    auto [cp, n] = CodePoint(s, start);
    if (!JsSpace(cp)) break;
    start += n;
  }
  size_t end = start, kept = start;
  while (end < s.size()) {
    auto [cp, n] = CodePoint(s, end);
    end += n;
    if (!JsSpace(cp)) kept = end;
  }
  return s.substr(start, kept - start);
}

std::string_view Prefix(std::string_view s, size_t units) {
  size_t i = 0, used = 0;
  while (i < s.size()) {
    auto [cp, n] = CodePoint(s, i);
    size_t u = cp > 0xffff ? 2 : 1;
    if (used + u > units) break;
    used += u;
    i += n;
  }
  return s.substr(0, i);
}

bool Storable(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b == 0) return false;
    size_t n = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? b : b & (0xff >> (n + 1));
    for (size_t k = 1; k < n; k++) {
      auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    // Overlong forms, surrogates (a lone one as WTF-8) and code points past U+10FFFF.
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
    i += n;
  }
  return true;
}

std::string JsNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return "0";
  std::string sign = v < 0 ? "-" : "";
  // The shortest digits that read back as v, and where the decimal point goes (ECMAScript
  // Number::toString: n is that position, k the count of digits).
  char buf[64];
  auto end = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific).ptr;
  std::string s(buf, end);
  size_t e = s.find('e');
  std::string digits;
  for (size_t i = 0; i < e; i++) {
    if (s[i] != '.') digits += s[i];
  }
  int k = static_cast<int>(digits.size()), n = std::stoi(s.substr(e + 1)) + 1;
  if (k <= n && n <= 21) return sign + digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21) return sign + digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  if (-6 < n && n <= 0) return sign + "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  std::string out = sign + digits.substr(0, 1);
  if (k > 1) out += "." + digits.substr(1);
  return out + "e" + (n - 1 >= 0 ? "+" : "-") + std::to_string(std::abs(n - 1));
}

namespace {

/** Big-endian unsigned of `n` bytes at p. */
uint64_t BigEndian(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v = (v << 8) | p[i];
  return v;
}

/** An integer's exact digits: msgpack's 64-bit formats reach a managed handler as BigInts. */
std::string IntegerText(const gsf_type_borrowed_bytes& raw) {
  if (raw.len == 0) return "";
  const uint8_t* p = raw.ptr;
  if (raw.len == 9 && p[0] == 0xcf) return std::to_string(BigEndian(p + 1, 8));
  if (raw.len == 9 && p[0] == 0xd3) return std::to_string(static_cast<int64_t>(BigEndian(p + 1, 8)));
  Reader r(raw);
  return std::to_string(r.integer().value_or(0));
}

/** String(uint8Array): the bytes in decimal, joined by commas. */
std::string BinaryText(const gsf_type_borrowed_bytes& raw) {
  if (raw.len == 0) return "";
  const uint8_t* p = raw.ptr;
  size_t head = p[0] == 0xc4 ? 2 : p[0] == 0xc5 ? 3 : 5;
  if (raw.len < head) return "";
  std::string out;
  for (size_t i = head; i < raw.len; i++) {
    if (i > head) out += ',';
    out += std::to_string(p[i]);
  }
  return out;
}

/**
 * The milliseconds msgpackr decodes a timestamp (extension -1) to, computed as it does; NaN
 * for another extension (msgpackr's `undefined` among them) or a length it does not read.
 */
double TimestampMs(const gsf_type_borrowed_bytes& raw) {
  const uint8_t* p = raw.ptr;
  size_t head, size;
  if (raw.len >= 2 && p[0] >= 0xd4 && p[0] <= 0xd8) {
    head = 2;
    size = size_t{1} << (p[0] - 0xd4);
  } else if (raw.len >= 3 && p[0] == 0xc7) {
    head = 3;
    size = p[1];
  } else {
    return NAN;
  }
  if (raw.len != head + size || static_cast<int8_t>(p[head - 1]) != -1) return NAN;
  const uint8_t* d = p + head;
  if (size == 4) return static_cast<double>(BigEndian(d, 4)) * 1000;
  if (size == 8) {
    double ns = static_cast<double>(BigEndian(d, 4) >> 2);
    double sec = static_cast<double>(d[3] & 3) * 4294967296.0 + static_cast<double>(BigEndian(d + 4, 4));
    return ns / 1e6 + sec * 1000;
  }
  if (size == 12) {
    double ns = static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(BigEndian(d, 4))));
    // msgpackr reads the seconds' low 48 bits, with the sign of the top one.
    double sec = ((d[4] & 0x80) ? -281474976710656.0 : 0) + static_cast<double>(BigEndian(d + 6, 6));
    return ns / 1e6 + sec * 1000;
  }
  return NAN;
}

/**
 * String(date), Date.prototype.toString in the process's time zone, up to the offset:
 * `Thu Jan 01 1970 00:00:00 GMT+0000` (33 characters). The zone's name in parentheses that
 * JavaScript adds from ICU is left out; a room is cut to 32 characters before it.
 */
std::string DateText(double ms) {
  if (!std::isfinite(ms) || std::fabs(ms) > 8.64e15) return "Invalid Date";
  double t = std::trunc(ms);
  auto seconds = static_cast<time_t>(std::floor(t / 1000));
  std::tm tm{};
  if (localtime_r(&seconds, &tm) == nullptr) return "Invalid Date";
  static const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  long long year = static_cast<long long>(tm.tm_year) + 1900;
  long offset = tm.tm_gmtoff / 60;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %s %02d %s%04lld %02d:%02d:%02d GMT%c%02ld%02ld", kDays[tm.tm_wday], kMonths[tm.tm_mon],
                tm.tm_mday, year < 0 ? "-" : "", year < 0 ? -year : year, tm.tm_hour, tm.tm_min, tm.tm_sec,
                offset < 0 ? '-' : '+', std::labs(offset) / 60, std::labs(offset) % 60);
  return buf;
}

}  // namespace

std::string JsString(Reader value, int depth) {
  int type = value.type();
  switch (type) {
    case GSF_MP_STR: return std::string(value.string().value_or(""));
    case GSF_MP_BOOL: return value.boolean().value_or(false) ? "true" : "false";
    case GSF_MP_INT: return IntegerText(value.value().value_or(gsf_bytes(nullptr, 0)));
    case GSF_MP_FLOAT: return JsNumber(value.number().value_or(0));
    case GSF_MP_BIN: return BinaryText(value.value().value_or(gsf_bytes(nullptr, 0)));
    case GSF_MP_MAP: return "[object Object]";
    case GSF_MP_EXT: {
      // A timestamp is a Date; any other extension (msgpackr's `undefined`) reads as nothing.
      double ms = TimestampMs(value.value().value_or(gsf_bytes(nullptr, 0)));
      return std::isnan(ms) ? "" : DateText(ms);
    }
    case GSF_MP_ARRAY: {
      // Array.prototype.join: elements as strings, null and undefined as nothing.
      if (depth >= 32) return "";
      uint32_t n = value.array().value_or(0);
      std::string out;
      for (uint32_t i = 0; i < n; i++) {
        if (i > 0) out += ',';
        auto element = value.value();
        if (!element) break;
        Reader r(*element);
        if (r.type() != GSF_MP_NIL) out += JsString(r, depth + 1);
      }
      return out;
    }
    default: return "";  // nil (what `?? ''` gives)
  }
}

std::string RoomName(const Reader& body) {
  std::optional<Reader> room = body.type() == GSF_MP_MAP ? body.find("room") : std::nullopt;
  std::string text = room ? JsString(*room) : std::string();
  std::string_view cut = Prefix(Trim(text), 32);
  return cut.empty() ? std::string(kLobby) : std::string(cut);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string NewId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  uint64_t hi = random(), lo = random();
  hi = (hi & ~0xf000ull) | 0x4000ull;                   // version 4
  lo = (lo & ~(0xc000ull << 48)) | (0x8000ull << 48);  // variant 10
  char id[37];
  std::snprintf(id, sizeof id, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0xffff), static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xffffffffffffull));
  return id;
}

std::string Today() {
  std::time_t t = static_cast<std::time_t>(NowMs() / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char day[16];
  std::strftime(day, sizeof day, "%Y-%m-%d", &tm);
  return day;
}

Counts ReadCounts(std::optional<Reader> field) {
  Counts out;
  if (!field || field->type() != GSF_MP_MAP) return out;
  Reader r = *field;
  uint32_t n = r.map().value_or(0);
  for (uint32_t i = 0; i < n; i++) {
    auto key = r.string();
    auto value = r.number();
    if (!key || !value) throw Error(GSF_STATUS_INTERNAL, "a stored map of integers holds something else");
    out.emplace_back(std::string(*key), static_cast<int64_t>(*value));
  }
  return out;
}

void WriteCounts(Writer& w, const Counts& counts) {
  w.map(static_cast<uint32_t>(counts.size()));
  for (const auto& [key, value] : counts) w.string(key).integer(value);
}

int64_t& CountOf(Counts& counts, std::string_view key) {
  for (auto& [k, v] : counts) {
    if (k == key) return v;
  }
  return counts.emplace_back(std::string(key), 0).second;
}

}  // namespace arena
