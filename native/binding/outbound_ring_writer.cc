#include "outbound_ring_writer.h"

#include <algorithm>
#include <cstring>

namespace gsf::binding {

namespace {

// The ring's layout, as src/session/outbound-ring.ts defines it.
constexpr size_t kControlBytes = 64;
constexpr size_t kHeaderBytes = 24;
constexpr int kControlConsumed = 2;
constexpr int kControlCapacity = 3;
constexpr uint8_t kOpPad = 0;
constexpr uint8_t kOpSend = 1;
constexpr uint8_t kFlagBinary = 1;

size_t Align8(size_t n) { return (n + 7) & ~static_cast<size_t>(7); }

void PutI32(uint8_t* at, int32_t v) { std::memcpy(at, &v, sizeof v); }

}  // namespace

double WriteSendsToRing(uint8_t* ring, size_t length, uint32_t write, const CollectingEffects& fx) {
  if (length < kControlBytes || fx.used == 0) return -1;
  auto* control = reinterpret_cast<int32_t*>(ring);
  const auto capacity = static_cast<uint32_t>(__atomic_load_n(&control[kControlCapacity], __ATOMIC_ACQUIRE));
  if (capacity == 0 || (capacity & (capacity - 1)) != 0 || kControlBytes + capacity > length) return -1;
  // Larger records travel with the flush message (the writer's inline records), as JavaScript writes them.
  const size_t limit = capacity >> 2;
  size_t total = 0, largest = 0;
  for (size_t k = 0; k < fx.used; ++k) {
    const Effect& e = fx.list[k];
    if (e.code != kSend) return -1;
    const size_t size = Align8(kHeaderBytes + e.a.size());
    if (size > limit) return -1;
    total += size;
    largest = std::max(largest, size);
  }
  // A record never wraps: at most one pad (shorter than the largest record) precedes them.
  const auto consumed = static_cast<uint32_t>(__atomic_load_n(&control[kControlConsumed], __ATOMIC_ACQUIRE));
  const uint32_t used = write - consumed;
  if (used > capacity || used + total + largest > capacity) return -1;
  uint8_t* data = ring + kControlBytes;
  const uint32_t mask = capacity - 1;
  for (size_t k = 0; k < fx.used; ++k) {
    const Effect& e = fx.list[k];
    const size_t size = Align8(kHeaderBytes + e.a.size());
    uint32_t phys = write & mask;
    if (phys + size > capacity) {
      const uint32_t pad = capacity - phys;
      PutI32(data + phys, static_cast<int32_t>(pad));
      data[phys + 4] = kOpPad;
      write += pad;
      phys = 0;
    }
    uint8_t* r = data + phys;
    PutI32(r, static_cast<int32_t>(size));
    r[4] = kOpSend;
    r[5] = e.binary ? kFlagBinary : 0;
    r[6] = 0;
    r[7] = 0;
    PutI32(r + 8, static_cast<int32_t>(e.a.size()));
    PutI32(r + 12, 0);
    const double session = static_cast<double>(e.session);
    std::memcpy(r + 16, &session, sizeof session);
    std::memcpy(r + kHeaderBytes, e.a.data(), e.a.size());
    write += static_cast<uint32_t>(size);
  }
  return static_cast<double>(write);
}

}  // namespace gsf::binding
