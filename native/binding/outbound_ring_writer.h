// A native message handler's frames written straight into the calling worker's outbound ring
// (src/session/outbound-ring.ts describes the layout), instead of coming back to JavaScript as
// strings that the worker then writes there itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin_effects_binding.h"

namespace gsf::binding {

/**
 * Writes the call's effects as send records into the ring `ring` (control cells, then the data
 * area; `length` bytes in all) from position `write`, and returns the position after them.
 * Returns -1 and writes nothing unless every effect is a frame to send, each small enough to
 * stay in the ring, and all fit in the free space now: the caller then hands them to
 * JavaScript, whose writer waits for room or carries large records with its flush message.
 */
double WriteSendsToRing(uint8_t* ring, size_t length, uint32_t write, const CollectingEffects& fx);

}  // namespace gsf::binding
