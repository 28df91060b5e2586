#include "session_frame.h"

#include <cmath>

#include "../include/gsf_msgpack.h"
#include "js_number.h"
#include "json_msgpack.h"

namespace gsf {

namespace {

constexpr double kMaxSafeInteger = 9007199254740991.0;

bool SafeInteger(double v) { return std::isfinite(v) && v == std::trunc(v) && std::fabs(v) <= kMaxSafeInteger; }

bool ValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    int n = Utf8SequenceLength(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

bool Malformed(std::string* error, std::string what) {
  *error = std::move(what);
  return false;
}

bool DecodeJson(std::string_view frame, Envelope* out, std::string* storage, std::string* error) {
  JsonReader r(frame);
  r.SkipSpace();
  if (!r.Consume('{')) {
    if (r.Peek() == '[' || r.Peek() == '"' || r.Peek() == '-' || (r.Peek() >= '0' && r.Peek() <= '9') ||
        r.Peek() == 't' || r.Peek() == 'f' || r.Peek() == 'n') {
      return Malformed(error, "a message must be an object {type, body}");
    }
    r.Fail("unexpected token");
    *error = r.error();
    return false;
  }
  // The type is copied in front of the body in `storage`; offsets, because storage grows.
  storage->clear();
  size_t type_at = 0, type_len = 0, body_at = 0, body_len = 0;
  bool has_type = false, type_is_string = false;
  std::string key;
  if (!r.Consume('}')) {
    do {
      r.SkipSpace();
      key.clear();
      if (!r.ReadString(&key) || !r.Consume(':')) {
        if (r.error().empty()) r.Fail("expected ':'");
        *error = r.error();
        return false;
      }
      r.SkipSpace();
      if (key == "type") {
        has_type = true;
        type_is_string = r.Peek() == '"';
        type_at = storage->size();
        if (type_is_string) {
          if (!r.ReadString(storage)) break;
        } else if (!r.ReadValueAsMsgpack(storage)) {
          break;
        }
        type_len = storage->size() - type_at;
      } else if (key == "body") {
        body_at = storage->size();
        if (!r.ReadValueAsMsgpack(storage)) break;
        body_len = storage->size() - body_at;
      } else if (key == "id") {
        if (r.Peek() == '-' || (r.Peek() >= '0' && r.Peek() <= '9')) {
          if (!r.ReadNumber(&out->id)) break;
          out->has_id = true;
        } else {
          std::string ignored;
          if (!r.ReadValueAsMsgpack(&ignored)) break;
          out->has_id = true;
          out->id = NAN;  // not a number: not a safe integer
        }
      } else {
        std::string ignored;
        if (!r.ReadValueAsMsgpack(&ignored)) break;
        return Malformed(error, "unknown envelope key '" + key + "' (allowed: type, body, id)");
      }
    } while (r.Consume(','));
    if (r.error().empty() && !r.Consume('}')) r.Fail("expected ',' or '}'");
  }
  if (r.error().empty()) {
    r.SkipSpace();
    if (!r.AtEnd()) r.Fail("unexpected text after the JSON value");
  }
  if (!r.error().empty()) {
    *error = r.error();
    return false;
  }
  if (!has_type || !type_is_string || type_len == 0) return Malformed(error, "a message needs a non-empty string 'type'");
  if (out->has_id && !SafeInteger(out->id)) return Malformed(error, "'id' must be an integer");
  out->type = std::string_view(*storage).substr(type_at, type_len);
  out->body = std::string_view(*storage).substr(body_at, body_len);
  return true;
}

bool DecodeMsgpack(std::string_view frame, Envelope* out, std::string* error) {
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, frame.data(), frame.size());
  uint32_t n;
  if (!gsf_mp_read_map(&r, &n)) {
    gsf_mp_reader probe = r;
    if (r.error || !gsf_mp_skip(&probe) || !gsf_mp_at_end(&probe)) return Malformed(error, "message is not valid msgpack");
    return Malformed(error, "a message must be an object {type, body}");
  }
  bool has_type = false, type_is_string = false;
  for (uint32_t i = 0; i < n; ++i) {
    gsf_type_borrowed_str key;
    if (!gsf_mp_read_str(&r, &key)) {
      if (r.error || !gsf_mp_skip(&r)) return Malformed(error, "message is not valid msgpack");
      return Malformed(error, "unknown envelope key (allowed: type, body, id)");
    }
    std::string_view k(key.ptr, key.len);
    const char* value = reinterpret_cast<const char*>(r.p);
    if (k == "type") {
      has_type = true;
      gsf_type_borrowed_str type;
      type_is_string = gsf_mp_read_str(&r, &type);
      if (type_is_string) {
        out->type = std::string_view(type.ptr, type.len);
        if (!ValidUtf8(out->type)) return Malformed(error, "message type is not valid UTF-8");
      } else if (!gsf_mp_skip(&r)) {
        return Malformed(error, "message is not valid msgpack");
      }
    } else if (k == "body") {
      if (!gsf_mp_skip(&r)) return Malformed(error, "message is not valid msgpack");
      out->body = std::string_view(value, static_cast<size_t>(reinterpret_cast<const char*>(r.p) - value));
      // msgpackr's undefined is no body.
      if (out->body.size() == 3 && static_cast<uint8_t>(out->body[0]) == 0xd4 && out->body[1] == 0) out->body = {};
    } else if (k == "id") {
      uint8_t b = gsf_mp_next_type(&r) == GSF_MP_NONE ? 0xc1 : *r.p;
      double id = NAN;
      if (b == 0xd4 && r.end - r.p >= 3 && r.p[1] == 0) {  // undefined: as if absent
        r.p += 3;
        out->has_id = false;
        continue;
      }
      // 64-bit integer formats decode to BigInt in JavaScript, which is not a safe integer.
      if (b != 0xcf && b != 0xd3 && gsf_mp_read_double(&r, &id)) {
        out->id = id;
      } else if (!gsf_mp_skip(&r)) {
        return Malformed(error, "message is not valid msgpack");
      }
      out->has_id = true;
      out->id = id;
    } else {
      if (!gsf_mp_skip(&r)) return Malformed(error, "message is not valid msgpack");
      return Malformed(error, "unknown envelope key '" + std::string(k) + "' (allowed: type, body, id)");
    }
  }
  if (!gsf_mp_at_end(&r)) return Malformed(error, "message is not valid msgpack");
  if (!has_type || !type_is_string || out->type.empty()) return Malformed(error, "a message needs a non-empty string 'type'");
  if (out->has_id && !SafeInteger(out->id)) return Malformed(error, "'id' must be an integer");
  return true;
}

bool IsUndefined(std::string_view body) {
  return body.size() == 3 && static_cast<uint8_t>(body[0]) == 0xd4 && body[1] == 0 && body[2] == 0;
}

}  // namespace

bool DecodeEnvelope(std::string_view frame, bool msgpack, Envelope* out, std::string* storage, std::string* error) {
  *out = Envelope();
  return msgpack ? DecodeMsgpack(frame, out, error) : DecodeJson(frame, out, storage, error);
}

bool EncodeFrame(bool msgpack, std::string_view type, std::string_view body, const double* id, std::string* out,
                 std::string* error) {
  if (type.empty() || !ValidUtf8(type)) {
    *error = "message type must be a non-empty UTF-8 string";
    return false;
  }
  if (id && !SafeInteger(*id)) {
    *error = "message id must be a safe integer";
    return false;
  }
  size_t start = out->size();
  if (!msgpack) {
    out->append("{\"type\":");
    AppendJsonString(type, out);
    if (!body.empty()) {
      out->append(",\"body\":");
      bool undefined = false;
      size_t at = out->size();
      if (!MsgpackToJson(body, out, error, &undefined)) {
        out->resize(start);
        return false;
      }
      if (undefined) out->resize(at - 8);  // JSON.stringify leaves an undefined body out
    }
    if (id) {
      out->append(",\"id\":");
      AppendJsNumber(*id, out);
    }
    out->push_back('}');
    return true;
  }
  if (!body.empty() && !MsgpackValid(body, error)) return false;
  static const char kUndefined[] = {'\xd4', '\0', '\0'};
  out->append("\xde\x00", 2);
  out->push_back(id ? '\x03' : '\x02');
  out->append("\xa4type", 5);
  AppendMsgpackString(type, out);
  out->append("\xa4" "body", 5);
  if (body.empty() || IsUndefined(body)) out->append(kUndefined, 3);
  else out->append(body);
  if (id) {
    out->append("\xa2id", 3);
    AppendMsgpackNumber(*id, out);
  }
  return true;
}

}  // namespace gsf
