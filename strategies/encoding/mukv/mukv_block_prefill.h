#pragma once
// MuKV's block prefill: independent blocks run through the LLM in one pass, each attending to a
// shared past (the sinks, or the sinks and earlier blocks) and causally to itself only, then cut
// to the tokens dual-signal compression keeps (mukv_compression.h).

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/memory/kv_block.h"
#include "strategies/encoding/mukv/mukv_compression.h"

namespace svqa {

class Backbone;

struct BlockInput {
  Granularity granularity = Granularity::Frame;
  at::Tensor tokens;     // [n, hidden]
  at::Tensor positions;  // [3, n] where it is prefilled (and stored)
  at::Tensor deepstack;  // Qwen3-VL: [K, n, hidden] added after layers 0..K-1; else undefined
  int64_t first_frame = 0, last_frame = 0;
  double start_time = 0, end_time = 0;
  DcpSettings dcp;
};

struct PrefilledBlock {
  KvBlock block;                      // kept tokens only; representative at the last layer
  std::vector<at::Tensor> rotated;    // per layer, the kept keys rotated at their positions
};

// `past_keys` (rotated) and `past_values`, per layer (undefined: none), are visible to every block;
// `attention_layers` are the (layer, weight) pairs whose probabilities score tokens. Probabilities
// are computed only in those layers and only when some block is compressed.
std::vector<PrefilledBlock> prefill_blocks(Backbone& backbone, const std::vector<BlockInput>& blocks,
                                           const std::vector<at::Tensor>& past_keys,
                                           const std::vector<at::Tensor>& past_values,
                                           const std::vector<std::pair<int64_t, double>>& attention_layers);

}  // namespace svqa
