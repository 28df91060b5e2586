// msgpack -> JSON text, as JSON.stringify(msgpackr.unpack(bytes)) writes it.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "../include/gsf_msgpack.h"
#include "js_number.h"
#include "json_msgpack.h"

namespace gsf {

namespace {

// ISO 8601 text of a JavaScript Date's time value (Date.prototype.toISOString).
void AppendIsoDate(double ms, std::string* out) {
  int64_t t = static_cast<int64_t>(ms);
  int64_t days = t >= 0 ? t / 86400000 : -((-t + 86399999) / 86400000);
  int64_t in_day = t - days * 86400000;
  // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t day = doy - (153 * mp + 2) / 5 + 1;
  int64_t month = mp < 10 ? mp + 3 : mp - 9;
  int64_t year = yoe + era * 400 + (month <= 2);
  // Digits written by hand: snprintf cost more than the rest of a small answer's conversion.
  char buf[32];
  char* p = buf;
  auto digits = [&p](int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) p[i] = static_cast<char>('0' + v % 10);
    p += width;
  };
  *p++ = '"';
  if (year >= 0 && year <= 9999) {
    digits(year, 4);
  } else {
    *p++ = year < 0 ? '-' : '+';
    digits(year < 0 ? -year : year, 6);
  }
  *p++ = '-';
  digits(month, 2);
  *p++ = '-';
  digits(day, 2);
  *p++ = 'T';
  digits(in_day / 3600000, 2);
  *p++ = ':';
  digits(in_day / 60000 % 60, 2);
  *p++ = ':';
  digits(in_day / 1000 % 60, 2);
  *p++ = '.';
  digits(in_day % 1000, 3);
  *p++ = 'Z';
  *p++ = '"';
  out->append(buf, static_cast<size_t>(p - buf));
}

class Writer {
 public:
  Writer(const uint8_t* p, const uint8_t* end, std::string* out) : p_(p), end_(end), out_(out) {}

  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = what;
    return false;
  }
  const std::string& error() const { return error_; }
  bool AtEnd() const { return p_ == end_; }

  // Writes one value; `undefined` is set instead when it is msgpackr's undefined.
  bool Value(int depth, bool* undefined);

 private:
  bool Need(size_t n) { return static_cast<size_t>(end_ - p_) >= n || Fail("msgpack value is truncated"); }
  uint64_t Be(size_t at, int size) {
    uint64_t v = 0;
    for (int i = 0; i < size; ++i) v = (v << 8) | p_[at + static_cast<size_t>(i)];
    return v;
  }
  // The key of a map entry as JavaScript makes it a property name.
  bool Key(std::string* key);
  bool String(size_t head, size_t len);
  bool Number(double v);
  bool Ext(size_t head, size_t len, int8_t type, bool* undefined, std::string* key);
  bool Map(int depth, uint64_t count);

  const uint8_t* p_;
  const uint8_t* end_;
  std::string* out_;
  std::string error_;
  std::vector<KeySpan> keys_;
  bool key_mode_ = false;
};

bool Writer::String(size_t head, size_t len) {
  if (!Need(head + len)) return false;
  const uint8_t* s = p_ + head;
  if (!ValidUtf8(s, len)) return Fail("msgpack string is not valid UTF-8");
  AppendJsonString(std::string_view(reinterpret_cast<const char*>(s), len), out_);
  p_ += head + len;
  return true;
}

bool Writer::Number(double v) {
  if (std::isfinite(v) || key_mode_) AppendJsNumber(v, out_);
  else out_->append("null");
  return true;
}

bool Writer::Ext(size_t head, size_t len, int8_t type, bool* undefined, std::string* key) {
  if (!Need(head + len)) return false;
  const uint8_t* d = p_ + head;
  p_ += head + len;
  if (type == 0) {
    *undefined = true;
    if (key) *key = "undefined";
    return true;
  }
  if (type != -1 || key) return Fail("unsupported msgpack extension type " + std::to_string(type));
  // Timestamps, decoded as msgpackr does (including its reading of the 96-bit form).
  double ms;
  if (len == 4) {
    uint64_t s = (uint64_t{d[0]} << 24) | (uint64_t{d[1]} << 16) | (uint64_t{d[2]} << 8) | d[3];
    ms = static_cast<double>(s) * 1000;
  } else if (len == 8) {
    double ns = static_cast<double>((uint32_t{d[0]} << 22) + (uint32_t{d[1]} << 14) + (uint32_t{d[2]} << 6) + (d[3] >> 2));
    double s = (d[3] & 0x3) * 4294967296.0 + d[4] * 16777216.0 + (d[5] << 16) + (d[6] << 8) + d[7];
    ms = ns / 1000000 + s * 1000;
  } else if (len == 12) {
    int32_t ns = static_cast<int32_t>((uint32_t{d[0]} << 24) | (uint32_t{d[1]} << 16) | (uint32_t{d[2]} << 8) | d[3]);
    double s = ((d[4] & 0x80) ? -281474976710656.0 : 0) + d[6] * 1099511627776.0 + d[7] * 4294967296.0 +
               d[8] * 16777216.0 + (d[9] << 16) + (d[10] << 8) + d[11];
    ms = static_cast<double>(ns) / 1000000 + s * 1000;
  } else {
    ms = NAN;
  }
  // new Date(ms): NaN beyond +-8.64e15 ms, else truncated toward zero; JSON.stringify gives null or ISO text.
  if (!(std::fabs(ms) <= 8.64e15)) out_->append("null");
  else AppendIsoDate(std::trunc(ms) + 0.0, out_);
  return true;
}

bool Writer::Key(std::string* key) {
  if (!Need(1)) return false;
  uint8_t b = *p_;
  key->clear();
  size_t len = 0, head = 0;
  if (b >= 0xa0 && b <= 0xbf) { len = b & 0x1f; head = 1; }
  else if (b >= 0xd9 && b <= 0xdb) {
    int size = 1 << (b - 0xd9);
    if (!Need(1 + static_cast<size_t>(size))) return false;
    len = Be(1, size);
    head = 1 + static_cast<size_t>(size);
  }
  if (head > 0) {
    if (!Need(head + len)) return false;
    const uint8_t* s = p_ + head;
    if (!ValidUtf8(s, len)) return Fail("msgpack string is not valid UTF-8");
    // Kept as is, "__proto__" too (msgpackr renames that one to "__proto_" for JavaScript's
    // sake): a key a plugin wrote reaches the client as written, as a managed reply's would.
    key->assign(reinterpret_cast<const char*>(s), len);
    p_ += head + len;
    return true;
  }
  // Other keys become property names through String(key).
  std::string* saved = out_;
  out_ = key;
  bool undefined = false;
  bool ok;
  if (b == 0xc0 || b == 0xc2 || b == 0xc3) {
    key->assign(b == 0xc0 ? "null" : b == 0xc3 ? "true" : "false");
    ++p_;
    ok = true;
  } else if (b <= 0x7f || b >= 0xe0 || (b >= 0xcc && b <= 0xd3) || b == 0xca || b == 0xcb) {
    key_mode_ = true;  // String(NaN) is "NaN" where JSON has null
    ok = Value(0, &undefined);
    key_mode_ = false;
  } else if (b >= 0xd4 && b <= 0xd8 && Need(2) && p_[1] == 0) {
    ok = Ext(2, size_t{1} << (b - 0xd4), 0, &undefined, key);
  } else {
    ok = Fail("msgpack map key of an unsupported type (use strings)");
  }
  out_ = saved;
  return ok;
}

bool Writer::Map(int depth, uint64_t count) {
  out_->push_back('{');
  size_t content = out_->size();
  size_t base = keys_.size();
  bool ordered = true;
  for (uint64_t i = 0; i < count; ++i) {
    KeySpan k{};
    std::string key;
    if (!Key(&key)) return false;
    if (ordered && i > 0) out_->push_back(',');
    k.key_start = out_->size();
    AppendJsonString(key, out_);
    k.key_len = out_->size() - k.key_start;
    k.is_index = IsArrayIndexKey(key, &k.index);
    out_->push_back(':');
    k.value_start = out_->size();
    if (!Value(depth, &k.undefined)) return false;
    k.value_end = out_->size();
    if (k.is_index || k.undefined) ordered = false;
    keys_.push_back(k);
  }
  size_t n = keys_.size() - base;
  if (ordered && n > 1) ordered = KeysInJsOrder(*out_, keys_.data() + base, n);
  if (!ordered) {
    std::string rebuilt;
    WriteKeysInJsOrder(*out_, keys_.data() + base, n, ":", ",", &rebuilt);
    out_->replace(content, std::string::npos, rebuilt);
  }
  keys_.resize(base);
  out_->push_back('}');
  return true;
}

bool Writer::Value(int depth, bool* undefined) {
  *undefined = false;
  if (!Need(1)) return false;
  uint8_t b = *p_;
  if (b <= 0x7f) { ++p_; return Number(b); }
  if (b >= 0xe0) { ++p_; return Number(static_cast<int8_t>(b)); }
  if (b <= 0x8f || b == 0xde || b == 0xdf || b <= 0x9f || b == 0xdc || b == 0xdd) {
    bool map = b <= 0x8f || b == 0xde || b == 0xdf;
    uint64_t count;
    if (b <= 0x9f) { count = b & 0x0f; ++p_; }
    else {
      int size = (b == 0xde || b == 0xdc) ? 2 : 4;
      if (!Need(1 + static_cast<size_t>(size))) return false;
      count = Be(1, size);
      p_ += 1 + size;
    }
    if (depth >= kMaxJsonDepth) return Fail("msgpack nesting too deep");
    if (count > static_cast<uint64_t>(end_ - p_)) return Fail("msgpack value is truncated");
    if (map) return Map(depth + 1, count);
    out_->push_back('[');
    for (uint64_t i = 0; i < count; ++i) {
      if (i > 0) out_->push_back(',');
      bool element_undefined;
      size_t at = out_->size();
      if (!Value(depth + 1, &element_undefined)) return false;
      if (element_undefined) out_->replace(at, std::string::npos, "null");
    }
    out_->push_back(']');
    return true;
  }
  if (b <= 0xbf) return String(1, b & 0x1f);
  switch (b) {
    case 0xc0: ++p_; out_->append("null"); return true;
    case 0xc2: ++p_; out_->append("false"); return true;
    case 0xc3: ++p_; out_->append("true"); return true;
    case 0xc4: case 0xc5: case 0xc6: {
      int size = 1 << (b - 0xc4);
      if (!Need(1 + static_cast<size_t>(size))) return false;
      uint64_t len = Be(1, size);
      if (!Need(1 + static_cast<size_t>(size) + len)) return false;
      // msgpackr gives a Buffer, which JSON.stringify writes as {"type":"Buffer","data":[...]}.
      const uint8_t* d = p_ + 1 + size;
      out_->append("{\"type\":\"Buffer\",\"data\":[");
      for (uint64_t i = 0; i < len; ++i) {
        if (i > 0) out_->push_back(',');
        AppendJsNumber(d[i], out_);
      }
      out_->append("]}");
      p_ = d + len;
      return true;
    }
    case 0xc7: case 0xc8: case 0xc9: {
      int size = 1 << (b - 0xc7);
      if (!Need(2 + static_cast<size_t>(size))) return false;
      uint64_t len = Be(1, size);
      return Ext(2 + size, len, static_cast<int8_t>(p_[1 + size]), undefined, nullptr);
    }
    case 0xca: {
      if (!Need(5)) return false;
      uint32_t bits = static_cast<uint32_t>(Be(1, 4));
      float f;
      std::memcpy(&f, &bits, sizeof f);
      p_ += 5;
      return Number(f);
    }
    case 0xcb: {
      if (!Need(9)) return false;
      uint64_t bits = Be(1, 8);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      p_ += 9;
      return Number(d);
    }
    case 0xcc: case 0xcd: case 0xce: case 0xcf: {
      int size = 1 << (b - 0xcc);
      if (!Need(1 + static_cast<size_t>(size))) return false;
      uint64_t v = Be(1, size);
      p_ += 1 + size;
      AppendInteger(v, false, out_);
      return true;
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
      int size = 1 << (b - 0xd0);
      if (!Need(1 + static_cast<size_t>(size))) return false;
      uint64_t v = Be(1, size);
      if (size < 8 && (v >> (size * 8 - 1))) v |= ~uint64_t{0} << (size * 8);
      p_ += 1 + size;
      int64_t s = static_cast<int64_t>(v);
      AppendInteger(s < 0 ? ~v + 1 : v, s < 0, out_);
      return true;
    }
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
      if (!Need(2)) return false;
      return Ext(2, size_t{1} << (b - 0xd4), static_cast<int8_t>(p_[1]), undefined, nullptr);
    case 0xd9: case 0xda: case 0xdb: {
      int size = 1 << (b - 0xd9);
      if (!Need(1 + static_cast<size_t>(size))) return false;
      return String(1 + static_cast<size_t>(size), Be(1, size));
    }
    default:
      return Fail("msgpack byte 0xc1 is never used");
  }
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xf]);
    }
  }
  out->append(text.data() + run, text.size() - run);
  out->push_back('"');
}

bool MsgpackToJson(std::string_view msgpack, std::string* out, std::string* error, bool* undefined) {
  const auto* p = reinterpret_cast<const uint8_t*>(msgpack.data());
  size_t start = out->size();
  Writer w(p, p + msgpack.size(), out);
  bool is_undefined = false;
  bool ok = w.Value(0, &is_undefined) && (w.AtEnd() || w.Fail("bytes after the msgpack value"));
  if (!ok) {
    out->resize(start);
    if (error) *error = w.error();
    return false;
  }
  if (undefined) *undefined = is_undefined;
  return true;
}

bool MsgpackValid(std::string_view msgpack, std::string* error) {
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, msgpack.data(), msgpack.size());
  if (gsf_mp_skip(&r) && gsf_mp_at_end(&r)) return true;
  if (error) *error = r.error ? "malformed msgpack" : "bytes after the msgpack value";
  return false;
}

}  // namespace gsf
