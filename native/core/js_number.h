// Numbers as JavaScript writes and reads them, for the JSON <-> msgpack transcoder.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gsf {

/** Appends `v` as JavaScript's String(v) writes it ("1e+21", "0.1", "-0" as "0", "NaN"). */
void AppendJsNumber(double v, std::string* out);

/** Appends an integer's decimal digits (with a minus sign when `negative`), without a std::string of its own. */
void AppendInteger(uint64_t magnitude, bool negative, std::string* out);

/** Appends the msgpack byte `format`, then the low `size` bytes of `v`, big-endian. */
void AppendBigEndian(uint8_t format, uint64_t v, int size, std::string* out);

/** Appends `v` as msgpackr packs a JavaScript number: 32-bit integers in the smallest int format, the rest float64. */
void AppendMsgpackNumber(double v, std::string* out);

/**
 * Reads a JSON number (RFC 8259 grammar) at the start of `text`; returns the characters it
 * took, or 0 if there is none. Out-of-range values become +-Infinity or +-0, as JSON.parse does.
 */
size_t ParseJsonNumber(std::string_view text, double* out);

/** Whether `key` is an array index ("0" .. "4294967294" in canonical form): JavaScript orders such keys first. */
bool IsArrayIndexKey(std::string_view key, uint32_t* index);

}  // namespace gsf
