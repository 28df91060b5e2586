// Tag values for native code, equal to the TypeScript ones (src/events/tags.ts).
#pragma once

#include <cstdint>
#include <string_view>

namespace gsf {

/** Smallest random, named or session tag: tags below it are reserved (0 null, 1 timers). */
constexpr uint64_t kTagBase = uint64_t{1} << 32;
/** Tags are below 2^53 so that they cross into JavaScript as plain numbers. */
constexpr uint64_t kTagSpan = (uint64_t{1} << 53) - kTagBase;

/** The tag of a name: FNV-1a (64-bit) of "gsf-tag:" + name, folded into [2^32, 2^53), as namedTag(). */
uint64_t NamedTag(std::string_view name);

/** A fresh random tag in [2^32, 2^53), from a per-thread generator. */
uint64_t RandomTag();

/** Whether `tag` is a value invoke accepts: a non-negative integer below 2^53. */
inline bool IsValidTag(uint64_t tag) { return tag < (uint64_t{1} << 53); }

}  // namespace gsf
