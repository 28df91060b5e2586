#include "event_tags.h"

#include <random>

namespace gsf {

uint64_t NamedTag(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  };
  mix("gsf-tag:");
  mix(name);
  return kTagBase + h % kTagSpan;
}

uint64_t RandomTag() {
  thread_local std::mt19937_64 generator{[] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }()};
  return kTagBase + generator() % kTagSpan;
}

}  // namespace gsf
