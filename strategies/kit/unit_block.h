#pragma once
// ReKV's bank block of one encoded unit, which every encoder that stores frames as ReKV does calls:
// its full un-rotated K/V per layer, span, encode positions and the mean-key representative (per
// kv head).

#include "core/memory/kv_block.h"
#include "engine/visual_units.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

KvBlock rekv_unit_block(const VisualUnit& unit, WindowOutput output);

}  // namespace svqa
