// JSON text -> msgpack (JsonReader).
#include "js_number.h"
#include "json_msgpack.h"

namespace gsf {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// Rewrites the big-endian count of a container header reserved at `at` with `reserved` bytes
// (1: fix form, 3: 16-bit); grows the header in place when the count needs more.
void PatchCount(std::string* out, size_t at, size_t reserved, uint64_t count, uint8_t fix, uint8_t f16, uint8_t f32) {
  std::string head;
  if (fix && count < 16) head.push_back(static_cast<char>(fix | count));
  else if (count <= 0xffff) AppendBigEndian(f16, count, 2, &head);
  else AppendBigEndian(f32, count, 4, &head);
  out->replace(at, reserved, head);
}

}  // namespace

int Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](int i) { return p + i < end && (p[i] & 0xc0) == 0x80; };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;   // overlong
    if (c == 0xed && p[1] >= 0xa0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xf0 && p[1] < 0x90) return 0;
    if (c == 0xf4 && p[1] >= 0x90) return 0;
    return 4;
  }
  return 0;
}

bool ValidUtf8(const uint8_t* s, size_t len) {
  for (size_t i = 0; i < len;) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    int n = Utf8SequenceLength(s + i, s + len);
    if (n == 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

void AppendMsgpackString(std::string_view text, std::string* out) {
  size_t n = text.size();
  if (n < 32) out->push_back(static_cast<char>(0xa0 | n));
  else if (n <= 0xff) AppendBigEndian(0xd9, n, 1, out);
  else if (n <= 0xffff) AppendBigEndian(0xda, n, 2, out);
  else AppendBigEndian(0xdb, n, 4, out);
  out->append(text);
}

void JsonReader::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++pos_;
  }
}

bool JsonReader::Consume(char c) {
  SkipSpace();
  if (Peek() != c) return false;
  ++pos_;
  return true;
}

bool JsonReader::Fail(const char* what) {
  if (error_.empty()) error_ = std::string(what) + " at position " + std::to_string(pos_);
  return false;
}

bool JsonReader::ReadString(std::string* out) {
  if (Peek() != '"') return Fail("expected a string");
  ++pos_;
  const auto* p = reinterpret_cast<const unsigned char*>(text_.data());
  const auto* end = p + text_.size();
  for (;;) {
    size_t run = pos_;
    while (pos_ < text_.size() && p[pos_] >= 0x20 && p[pos_] < 0x80 && p[pos_] != '"' && p[pos_] != '\\') ++pos_;
    out->append(text_.data() + run, pos_ - run);
    if (pos_ >= text_.size()) return Fail("unterminated string");
    unsigned char c = p[pos_];
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (c < 0x20) return Fail("control character in string");
    if (c >= 0x80) {
      int n = Utf8SequenceLength(p + pos_, end);
      if (n == 0) return Fail("invalid UTF-8 in string");
      out->append(text_.data() + pos_, static_cast<size_t>(n));
      pos_ += static_cast<size_t>(n);
      continue;
    }
    // A backslash escape.
    if (++pos_ >= text_.size()) return Fail("unterminated string");
    char e = text_[pos_++];
    switch (e) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        auto hex4 = [&](uint32_t* v) {
          if (pos_ + 4 > text_.size()) return false;
          *v = 0;
          for (int i = 0; i < 4; ++i) {
            int d = HexDigit(text_[pos_ + i]);
            if (d < 0) return false;
            *v = *v * 16 + static_cast<uint32_t>(d);
          }
          pos_ += 4;
          return true;
        };
        uint32_t cp;
        if (!hex4(&cp)) return Fail("bad \\u escape");
        if (cp >= 0xd800 && cp <= 0xdbff && pos_ + 1 < text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
          size_t save = pos_;
          pos_ += 2;
          uint32_t low;
          if (hex4(&low) && low >= 0xdc00 && low <= 0xdfff) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else {
            pos_ = save;
          }
        }
        // A lone surrogate has no UTF-8 form: it becomes U+FFFD.
        if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
        AppendUtf8(cp, out);
        break;
      }
      default:
        return Fail("bad escape in string");
    }
  }
}

bool JsonReader::ReadNumber(double* out) {
  size_t n = ParseJsonNumber(text_.substr(pos_), out);
  if (n == 0) return Fail("bad number");
  pos_ += n;
  return true;
}

bool JsonReader::ReadValueAsMsgpack(std::string* out) {
  SkipSpace();
  return Value(out, 0);
}

bool JsonReader::Value(std::string* out, int depth) {
  char c = Peek();
  switch (c) {
    case '{':
      return Object(out, depth + 1);
    case '[':
      return Array(out, depth + 1);
    case '"': {
      key_.clear();
      if (!ReadString(&key_)) return false;
      AppendMsgpackString(key_, out);
      return true;
    }
    case 't':
    case 'f':
    case 'n': {
      std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      if (text_.substr(pos_, word.size()) != word) return Fail("unexpected token");
      pos_ += word.size();
      out->push_back(static_cast<char>(c == 't' ? 0xc3 : c == 'f' ? 0xc2 : 0xc0));
      return true;
    }
    default: {
      double v;
      if (c != '-' && (c < '0' || c > '9')) return Fail(AtEnd() ? "unexpected end of JSON" : "unexpected token");
      if (!ReadNumber(&v)) return false;
      AppendMsgpackNumber(v, out);
      return true;
    }
  }
}

bool JsonReader::Array(std::string* out, int depth) {
  if (depth > kMaxJsonDepth) return Fail("nesting too deep");
  ++pos_;  // '['
  size_t header = out->size();
  out->push_back('\0');
  uint64_t count = 0;
  if (!Consume(']')) {
    do {
      SkipSpace();
      if (!Value(out, depth)) return false;
      ++count;
    } while (Consume(','));
    if (!Consume(']')) return Fail("expected ',' or ']'");
  }
  PatchCount(out, header, 1, count, 0x90, 0xdc, 0xdd);
  return true;
}

bool JsonReader::Object(std::string* out, int depth) {
  if (depth > kMaxJsonDepth) return Fail("nesting too deep");
  ++pos_;  // '{'
  size_t header = out->size();
  out->append(3, '\0');  // msgpackr writes every object with a map16 header
  size_t base = keys_.size();
  bool ordered = true;
  if (!Consume('}')) {
    do {
      SkipSpace();
      KeySpan k{};
      k.key_start = out->size();
      key_.clear();
      if (!ReadString(&key_)) return false;
      k.is_index = IsArrayIndexKey(key_, &k.index);
      AppendMsgpackString(key_, out);
      k.key_len = out->size() - k.key_start;
      if (!Consume(':')) return Fail("expected ':'");
      SkipSpace();
      k.value_start = out->size();
      if (!Value(out, depth)) return false;
      k.value_end = out->size();
      if (k.is_index) ordered = false;
      keys_.push_back(k);
    } while (Consume(','));
    if (!Consume('}')) return Fail("expected ',' or '}'");
  }
  size_t n = keys_.size() - base;
  if (ordered && n > 1) ordered = KeysInJsOrder(*out, keys_.data() + base, n);
  if (!ordered) {
    std::string rebuilt;
    n = WriteKeysInJsOrder(*out, keys_.data() + base, n, "", "", &rebuilt);
    out->replace(header + 3, std::string::npos, rebuilt);
  }
  keys_.resize(base);
  PatchCount(out, header, 3, n, 0, 0xde, 0xdf);
  return true;
}

bool JsonToMsgpack(std::string_view json, std::string* out, std::string* error) {
  JsonReader reader(json);
  size_t start = out->size();
  bool ok = reader.ReadValueAsMsgpack(out);
  if (ok) {
    reader.SkipSpace();
    ok = reader.AtEnd() || reader.Fail("unexpected text after the JSON value");
  }
  if (!ok) {
    out->resize(start);
    if (error) *error = reader.error();
  }
  return ok;
}

}  // namespace gsf
