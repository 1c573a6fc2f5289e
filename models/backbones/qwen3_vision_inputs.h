#pragma once
// What Qwen3-VL's vision blocks need besides pixels, for one temporal patch, computed in C++ as
// transformers' vision_utils computes it: the 2-D rotary tables and the bilinear resampling
// (align_corners) of the learned square position grid to the frame's patch grid.

#include <ATen/ATen.h>

#include <cstdint>

namespace svqa {

struct Qwen3VisionSpec {
  int64_t merge_size = 2, head_dim = 72, num_position_embeddings = 2304;
  double rope_theta = 10000.0;
};

struct Qwen3VisionInputs {
  at::Tensor cos, sin;         // [N, head_dim] float32, patches in merge-block order
  at::Tensor interp_index;     // [N, 4] int64 rows of the learned grid
  at::Tensor interp_weight;    // [N, 4] float32 bilinear weights
};

// grid_h, grid_w in patches (multiples of merge_size); N = grid_h * grid_w.
Qwen3VisionInputs qwen3_vision_inputs(int64_t grid_h, int64_t grid_w, const Qwen3VisionSpec& spec);

}  // namespace svqa
