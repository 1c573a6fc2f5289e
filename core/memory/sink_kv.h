#pragma once
// The attention sinks every context starts with: the prefilled system prompt.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace svqa {

struct SinkKv {
  std::vector<at::Tensor> keys, values;  // per layer [n_init, kv_heads, d], un-rotated
  at::Tensor positions;                  // [3, n_init]
  int64_t size() const { return positions.defined() ? positions.size(1) : 0; }
};

}  // namespace svqa
