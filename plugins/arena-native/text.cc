// Text as the TypeScript game cuts and formats it: trim, slice by UTF-16 code units, UTC days,
// and the integer maps (inventory, clicks_by_day) kept in their key order.
#include <chrono>
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

std::string RoomName(const Reader& body) {
  std::optional<Reader> room = body.type() == GSF_MP_MAP ? body.find("room") : std::nullopt;
  std::string text;
  if (room) {
    if (auto s = Reader(*room).string()) {
      text = std::string(*s);
    } else if (auto i = Reader(*room).integer()) {
      text = std::to_string(*i);
    } else if (auto b = Reader(*room).boolean()) {
      text = *b ? "true" : "false";
    }
  }
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
