#pragma once
// One layer's memory cut to the tokens HERMES keeps (reference code haowei-freesky/HERMES,
// llavaov_online_official.py `_shrink_positions_and_rerotate_keys`): kept tokens stay at their
// positions, or, once positions near the model's limit, are re-indexed densely after the sinks;
// in long-term layers the tokens not kept are folded into one summary token (mean key, mean
// value) placed right after the last kept token. The reference re-rotates each folded key to the
// summary's position before averaging; keys here are un-rotated, so the mean key is the same.

#include <ATen/ATen.h>

#include <cstdint>

#include "core/memory/kv_block.h"

namespace svqa {

struct ShrinkRule {
  bool fold = false;         // long-term layer: the dropped tokens become one summary token
  int64_t sinks_next = 0;    // the position after the sinks (where a summary goes when nothing is kept)
  bool reindex = false;      // kept tokens take sinks_next, sinks_next + 1, ... (the reference's compaction)
};

// `memory`: positions ascending; `kept`: ascending int64 indices into its tokens.
LayerMemory shrink_layer(const LayerMemory& memory, const at::Tensor& kept, const ShrinkRule& rule);

}  // namespace svqa
