#pragma once
// The attention sinks every encoder starts a stream with: the system prompt prefilled with plain
// causal attention at text positions 0…n−1.

#include <cstdint>
#include <vector>

#include "core/memory/sink_kv.h"

namespace svqa {

class Backbone;

// Un-rotated K/V of `ids` per layer (undefined tensors when there are no ids).
SinkKv prefill_sinks(Backbone& backbone, const std::vector<int64_t>& ids);

}  // namespace svqa
