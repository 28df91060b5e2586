// Client frames {type, body, id?} for native handlers: decoding a request, encoding a reply,
// byte for byte as src/session/codec.ts does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gsf {

/** A session id's lowest bit is its codec: odd ids are msgpack sessions, even ids json. */
inline bool IsMsgpackSession(uint64_t session_id) { return (session_id & 1) != 0; }

/** A decoded request. `body` is msgpack (empty: no body) and may point into the frame. */
struct Envelope {
  std::string_view type;
  std::string_view body;
  bool has_id = false;
  double id = 0;
};

/**
 * Decodes a frame of the session's codec, with the checks of checkEnvelope (an object with a
 * non-empty string `type`, an optional body, an optional safe-integer `id`, no other key).
 * A JSON body is converted into `storage`; `type` may point into `storage` or the frame.
 */
bool DecodeEnvelope(std::string_view frame, bool msgpack, Envelope* out, std::string* storage, std::string* error);

/**
 * Encodes {type, body, id} as encodeFrame does for the codec: JSON `{"type":T,"body":B}` plus
 * `,"id":N`, the body left out when it is empty or undefined; msgpack a map16 of the same keys.
 * `body` is msgpack; false with `error` set when it is not valid (or not expressible as JSON).
 */
bool EncodeFrame(bool msgpack, std::string_view type, std::string_view body, const double* id, std::string* out,
                 std::string* error);

}  // namespace gsf
