// JSON <-> msgpack, the way gsf's JavaScript side converts them (JSON.parse + msgpackr.pack,
// msgpackr.unpack + JSON.stringify), so a native handler sees what a managed one would.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "js_key_order.h"

namespace gsf {

/** Nesting deeper than this is refused (both directions). */
constexpr int kMaxJsonDepth = 256;

/**
 * Reads JSON text value by value. Objects come out with JavaScript's key order: array-index
 * keys first, ascending; a repeated key keeps its first place and its last value.
 */
class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  /** Skips JSON whitespace (space, tab, CR, LF). */
  void SkipSpace();
  bool AtEnd() const { return pos_ >= text_.size(); }
  /** The next character, or 0 at the end. */
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  /** Takes `c` if it comes next (after whitespace). */
  bool Consume(char c);
  /** Reads a string literal, decoded to UTF-8. */
  bool ReadString(std::string* out);
  /** Reads a number literal. */
  bool ReadNumber(double* out);
  /** Reads one value and appends it as msgpack, as msgpackr.pack(JSON.parse(...)) writes it. */
  bool ReadValueAsMsgpack(std::string* out);
  /** Records an error at the current position; returns false. */
  bool Fail(const char* what);
  const std::string& error() const { return error_; }

 private:
  bool Value(std::string* out, int depth);
  bool Object(std::string* out, int depth);
  bool Array(std::string* out, int depth);

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
  std::vector<KeySpan> keys_;  // pairs of the objects being read, innermost last
  std::string key_;
};

/** Appends the msgpack of one JSON text; false with `error` set when it is not valid JSON. */
bool JsonToMsgpack(std::string_view json, std::string* out, std::string* error);

/**
 * Appends the JSON text of one msgpack value (which must span all of `msgpack`). When the value
 * is `undefined` (msgpackr's fixext 0), nothing is appended and `*undefined` is set, as
 * JSON.stringify returns nothing for it. Differences from JavaScript, where it would throw or
 * mangle: 64-bit integer formats are written exactly (JavaScript gets a BigInt), a key
 * "__proto__" stays as it is (msgpackr renames it "__proto_"), and invalid UTF-8 is an error
 * (JavaScript substitutes U+FFFD).
 */
bool MsgpackToJson(std::string_view msgpack, std::string* out, std::string* error, bool* undefined = nullptr);

/** Checks that `msgpack` holds exactly one well-formed value. */
bool MsgpackValid(std::string_view msgpack, std::string* error);

/** Appends `text` (UTF-8) as a JSON string literal, escaped as JSON.stringify does. */
void AppendJsonString(std::string_view text, std::string* out);

/** Appends a msgpack string (smallest header). */
void AppendMsgpackString(std::string_view text, std::string* out);

/** Length of the valid UTF-8 sequence at `p` (1 to 4), or 0 if it is not one. */
int Utf8SequenceLength(const unsigned char* p, const unsigned char* end);

/** Whether `s` is valid UTF-8 (ASCII bytes are checked inline). */
bool ValidUtf8(const uint8_t* s, size_t len);

}  // namespace gsf
